// Pre-send checks on demand: of a template (its draft or its published version, with sample values), or of a draft
// message. The same rules refuse a failing campaign send (docs/templates.md lists them).
import { z } from 'zod';
import { runChecks } from '../../shared/checks/run.ts';
import { networkOptions } from '../../shared/checks/network.ts';
import type { EmailCheck } from '../../shared/checks/types.ts';
import { htmlToText } from '../../shared/emails/content.ts';
import { getTopic } from '../../shared/topics/topics.ts';
import { ServiceError } from '../../shared/errors.ts';
import { checkTemplate } from '../../shared/templates/checks.ts';
import { TemplateCache } from '../../shared/templates/send.ts';
import type { ApiDeps } from '../deps.ts';
import { defineOperation } from './operation.ts';
import { checksResult, CONTENT_MAX_CHARS, templateParams } from './template-schemas.ts';

const topicId = z
  .string()
  .nullish()
  .describe(
    'Check it as sent under this topic of the team: every copy then carries a List-Unsubscribe header (the unsubscribe check)',
  );

function result(checks: EmailCheck[]) {
  const worst = checks.some((c) => c.status === 'fail')
    ? 'fail'
    : checks.some((c) => c.status === 'warn')
      ? 'warn'
      : 'pass';
  return { object: 'checks' as const, status: worst, checks } as z.input<typeof checksResult>;
}

/** Whether the message would carry a List-Unsubscribe header: under a topic of the team (else 422), or given. */
async function listUnsubscribe(deps: ApiDeps, teamId: string, topic: string | null | undefined, given = false) {
  if (!topic) return given;
  if (!(await getTopic(deps.db, teamId, topic)))
    throw new ServiceError('validation_error', `Topic \`${topic}\` not found.`, {
      errors: [{ path: 'topic_id', message: 'not found' }],
    });
  return true;
}

const base = { tag: 'templates', permission: 'full_access' } as const;

export const checkOperations = [
  defineOperation({
    ...base,
    operationId: 'checkTemplate',
    method: 'post',
    path: '/templates/{id_or_alias}/checks',
    summary: 'Run the pre-send checks on a template',
    description:
      "Render the template's draft (or its published version) with `variables` and its fallbacks, as a send would, and run every pre-send check on the result. A variable left without a value is an `unresolved_variable` failure here (a send would be refused). Links and images are asked over the network only when the operator turned CHECKS_NETWORK on.",
    scope: 'templates:read',
    params: templateParams,
    body: z.object({
      variables: z.record(z.string(), z.unknown()).optional().describe('Sample values, as a send gives them'),
      version: z
        .enum(['draft', 'published'])
        .default('draft')
        .describe('`draft` (default): what an update wrote; `published`: what sends use'),
      topic_id: topicId,
    }),
    response: checksResult,
    handler: async ({ auth, params, body, deps }) => {
      const checks = await checkTemplate(
        deps.db,
        deps.templates ?? new TemplateCache(1),
        auth.team.id,
        params.id_or_alias,
        {
          version: body.version,
          variables: body.variables,
          listUnsubscribe: await listUnsubscribe(deps, auth.team.id, body.topic_id),
        },
        networkOptions(deps.config, deps.dns),
      );
      return result(checks);
    },
  }),
  defineOperation({
    ...base,
    tag: 'emails',
    operationId: 'checkEmail',
    method: 'post',
    path: '/emails/checks',
    summary: 'Run the pre-send checks on a draft',
    description:
      'Run every pre-send check on a message as it would be sent: its subject, html and text (made from the html when absent, as a send does). Nothing is sent or stored. A send under a topic runs the same checks (without the network) and is refused while one fails, unless it sends `acknowledge_checks: true`.',
    scope: 'emails:send',
    body: z.object({
      subject: z.string().max(998).nullish().describe('The subject'),
      html: z.string().max(CONTENT_MAX_CHARS).nullish().describe('The HTML body'),
      text: z.string().max(CONTENT_MAX_CHARS).nullish().describe('The text part; absent: made from the html'),
      headers: z
        .record(z.string(), z.string())
        .nullish()
        .describe('Header fields the send would carry (a `List-Unsubscribe` counts for the unsubscribe check)'),
      topic_id: topicId,
    }),
    response: checksResult,
    handler: async ({ auth, body, deps }) => {
      const html = body.html ?? null;
      const given = Object.keys(body.headers ?? {}).some((h) => h.toLowerCase() === 'list-unsubscribe');
      const checks = await runChecks(
        {
          subject: body.subject ?? null,
          html,
          text: body.text ?? (html !== null ? htmlToText(html) : null),
          listUnsubscribe: await listUnsubscribe(deps, auth.team.id, body.topic_id, given),
        },
        networkOptions(deps.config, deps.dns),
      );
      return result(checks);
    },
  }),
];
