// The pre-send checks of a template (POST /templates/{id}/checks): its draft, or its published version, rendered
// with sample values as a send would render it. A variable the sample leaves without a value is an
// `unresolved_variable` finding rather than a refusal; a value of the wrong type is still a 422.
import type { Knex } from 'knex';
import { notFound, ServiceError } from '../errors.ts';
import { htmlToText } from '../emails/content.ts';
import { runChecks } from '../checks/run.ts';
import type { NetworkOptions } from '../checks/network.ts';
import type { EmailCheck } from '../checks/types.ts';
import { compileContent, documentFacts, renderContent } from './compile.ts';
import { publishedTemplate, type TemplateCache } from './send.ts';
import { findTemplate } from './store.ts';
import { bindSample, checkValuesSize } from './variables.ts';

export interface TemplateCheckOptions {
  version: 'draft' | 'published';
  variables?: Record<string, unknown>;
  /** The send would go under a topic, so every copy carries a List-Unsubscribe header. */
  listUnsubscribe: boolean;
}

export async function checkTemplate(
  db: Knex,
  cache: TemplateCache,
  teamId: string,
  idOrAlias: string,
  o: TemplateCheckOptions,
  network: NetworkOptions | null,
): Promise<EmailCheck[]> {
  checkValuesSize(o.variables);
  const row = await findTemplate(db, teamId, idOrAlias);
  if (!row) throw notFound('Template');
  if (o.version === 'published' && !row.published_version_id)
    throw new ServiceError('validation_error', 'Invalid `version`: the template has no published version.', {
      errors: [{ path: 'version', message: 'the template has no published version' }],
    });
  const compiled =
    o.version === 'published' ? (await publishedTemplate(db, cache, teamId, row.id)).compiled : compileContent(row);
  const { context, missing } = bindSample(compiled.content.variables, o.variables, compiled.required);
  const rendered = renderContent(compiled, context);
  return runChecks(
    {
      subject: rendered.subject,
      html: rendered.html,
      // As a send makes it: the text part from the html when the template has none.
      text: rendered.text ?? htmlToText(rendered.html),
      listUnsubscribe: o.listUnsubscribe,
      missingVariables: missing,
      blocks: compiled.content.document ? documentFacts(compiled, context) : undefined,
    },
    network,
  );
}
