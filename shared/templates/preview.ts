// A preview of template content that is not saved: what an editor shows while its user types. The content is checked
// and rendered exactly as a write would (the block document through MJML), filled with sample values and the
// fallbacks as a send would fill it, and read by every pre-send check (without the network: a preview answers at
// typing speed). Nothing is written to the database. The rendered HTML is also kept for PREVIEW_TTL_SECONDS in Redis
// under a random id, so that a browser can open it as a document of its own (GET /templates/previews/{id}) with a
// policy that lets the email's inline styles apply: an `srcdoc` frame inherits the dashboard's strict policy, which
// blocks them.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { htmlToText } from '../emails/content.ts';
import { runChecks } from '../checks/run.ts';
import type { EmailCheck } from '../checks/types.ts';
import { redisKey } from '../redis.ts';
import { compileContent, documentFacts, renderContent } from './compile.ts';
import { draft, type TemplateInput } from './templates.ts';
import { bindSample, checkValuesSize } from './variables.ts';

export const PREVIEW_TTL_SECONDS = 30 * 60;

export interface Preview {
  id: string;
  subject: string | null;
  html: string;
  text: string;
  checks: EmailCheck[];
}

interface PreviewDeps {
  redis: Redis;
  config: Pick<Config, 'REDIS_PREFIX' | 'PUBLIC_BASE_URL'>;
}

const key = (deps: PreviewDeps, teamId: string, id: string) => redisKey(deps.config, 'template-preview', teamId, id);

export async function previewContent(
  deps: PreviewDeps,
  teamId: string,
  input: TemplateInput,
  values: Record<string, unknown> | undefined,
  listUnsubscribe: boolean,
): Promise<Preview> {
  checkValuesSize(values);
  const content = await draft(null, input, new Date(), deps.config.PUBLIC_BASE_URL);
  const compiled = compileContent(content);
  const { context, missing } = bindSample(compiled.content.variables, values, compiled.required);
  const rendered = renderContent(compiled, context);
  const text = rendered.text ?? htmlToText(rendered.html);
  const checks = await runChecks(
    {
      subject: rendered.subject,
      html: rendered.html,
      text,
      listUnsubscribe,
      missingVariables: missing,
      blocks: compiled.content.document ? documentFacts(compiled, context) : undefined,
    },
    null,
  );
  const id = randomBytes(16).toString('base64url');
  await deps.redis.set(key(deps, teamId, id), rendered.html, 'EX', PREVIEW_TTL_SECONDS);
  return { id, subject: rendered.subject, html: rendered.html, text, checks };
}

/** The rendered HTML of the team's preview `id`, or null once it expired (or when it is another team's). */
export function previewHtml(deps: PreviewDeps, teamId: string, id: string): Promise<string | null> {
  return deps.redis.get(key(deps, teamId, id));
}
