// Broadcasts (resend-api.md §1.8): drafts, the send gate, cancel, duplicate, and the reports. The fan-out itself runs
// in the worker (shared/broadcasts/fanout.ts), which takes a queued or due broadcast within a second.
import * as store from '../../shared/broadcasts/store.ts';
import { fieldError, readContent, type ContentInput } from '../../shared/broadcasts/content.ts';
import type { z } from 'zod';
import type { ApiDeps } from '../deps.ts';
import { sendBroadcast } from '../../shared/broadcasts/gate.ts';
import { templateSnapshot } from '../../shared/broadcasts/from-template.ts';
import { broadcastCounts, clickedLinksPage, recipientsPage } from '../../shared/broadcasts/reports.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { defineOperation } from './operation.ts';
import { deleted, ref } from './schemas.ts';
import {
  broadcast,
  broadcastParams,
  clickedLinkItem,
  createBody,
  listItem,
  presentBroadcast,
  presentListItem,
  recipientItem,
  recipientsQuery,
  sendBody,
  updateBody,
} from './broadcast-schemas.ts';

const base = { tag: 'broadcasts', permission: 'full_access' } as const;
const answer = (row: { id: string }) => ({ object: 'broadcast' as const, id: row.id });
const GATE =
  'The send gate: the segment and topic must exist and the segment have members, the from domain be verified (403), the pre-send checks pass (422 `validation_error` with `details.checks`, unless `acknowledge_checks: true`) and the team be within its monthly marketing allowance (429 `marketing_quota_exceeded`). A `scheduled_at` in the past, beyond 30 days or outside the grammar is 422.';

/** The create's input with the template's snapshot under what the body gives itself (from, subject, reply_to). */
async function fromTemplate(deps: ApiDeps, teamId: string, body: z.output<typeof createBody>): Promise<ContentInput> {
  if (body.template_id === undefined) {
    if (body.variables !== undefined) throw fieldError('variables', 'goes only with `template_id`.');
    return body;
  }
  for (const field of ['html', 'text', 'document'] as const)
    if (body[field] !== undefined && body[field] !== null)
      throw fieldError('template_id', `a broadcast made from a template takes its body from it: give no \`${field}\`.`);
  const snapshot = await templateSnapshot(deps.db, deps.templates, teamId, body.template_id, body.variables);
  const given = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
  const merged = { ...snapshot, ...given, template_id: snapshot.template_id };
  if (merged.from === undefined) throw fieldError('from', 'is required: the template names no sender.');
  if (merged.subject === undefined) throw fieldError('subject', 'is required: the template has no subject.');
  return merged;
}

export const broadcastOperations = [
  defineOperation({
    ...base,
    operationId: 'createBroadcast',
    method: 'post',
    path: '/broadcasts',
    summary: 'Create a broadcast',
    description: `Create a broadcast to a segment: a draft, or with \`send: true\` sent at once (or at \`scheduled_at\`). Its body is \`html\` (and \`text\`), a block \`document\`, or a copy of a published template (\`template_id\`). ${GATE} A refused send creates nothing.`,
    scope: 'broadcasts:write',
    status: 201,
    body: createBody,
    response: ref('broadcast'),
    handler: async ({ auth, body, deps }) => {
      if (!body.segment_id && !body.audience_id) throw fieldError('segment_id', 'is required.');
      if (body.scheduled_at && !body.send) throw fieldError('scheduled_at', 'goes only with `send: true`.');
      const content = await readContent(
        deps.db,
        auth.team.id,
        await fromTemplate(deps, auth.team.id, body),
        deps.config.PUBLIC_BASE_URL,
      );
      const row = await deps.db.transaction(async (trx) => {
        const draft = await store.insertBroadcast(trx, auth.team.id, {
          ...content,
          from: content.from!,
          subject: content.subject!,
          segment_id: content.segment_id!,
        });
        if (!body.send) return draft;
        return sendBroadcast(trx, auth.team, draft.id, body, new Date());
      });
      return answer(row);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listBroadcasts',
    method: 'get',
    path: '/broadcasts',
    summary: 'List broadcasts',
    description: "List the team's broadcasts, newest first, with their status.",
    scope: 'broadcasts:read',
    query: listQuery,
    response: listEnvelope(listItem),
    handler: async ({ auth, query, deps }) =>
      toList(await store.listBroadcasts(deps.db, auth.team.id, query), presentListItem),
  }),
  defineOperation({
    ...base,
    operationId: 'getBroadcast',
    method: 'get',
    path: '/broadcasts/{id}',
    summary: 'Retrieve a broadcast',
    description:
      'Retrieve a broadcast: its content, `status` (draft, queued, scheduled, sending, sent, canceled, failed) and `counts` of what its copies have come to.',
    scope: 'broadcasts:read',
    params: broadcastParams,
    response: broadcast,
    handler: async ({ auth, params, deps }) => {
      const row = await store.mustGet(deps.db, auth.team.id, params.id);
      return presentBroadcast(row, await broadcastCounts(deps.db, row));
    },
  }),
  defineOperation({
    ...base,
    operationId: 'updateBroadcast',
    method: 'patch',
    path: '/broadcasts/{id}',
    summary: 'Update a broadcast',
    description:
      'Change a draft: any field of the create but `send`, `scheduled_at`, `template_id` and `variables`. A `document` renders the html and text again (the text made of its blocks unless `text` is given); `html` drops the document. A broadcast past draft is 422.',
    scope: 'broadcasts:write',
    params: broadcastParams,
    body: updateBody,
    response: ref('broadcast'),
    handler: async ({ auth, params, body, deps }) => {
      const content = await readContent(deps.db, auth.team.id, body, deps.config.PUBLIC_BASE_URL);
      return answer(await store.updateDraft(deps.db, auth.team.id, params.id, content));
    },
  }),
  defineOperation({
    ...base,
    operationId: 'deleteBroadcast',
    method: 'delete',
    path: '/broadcasts/{id}',
    summary: 'Delete a broadcast',
    description: 'Delete a draft. A broadcast that was sent (or is on its way) stays, with its reports: 422.',
    scope: 'broadcasts:write',
    params: broadcastParams,
    response: deleted('broadcast'),
    handler: async ({ auth, params, deps }) => {
      const row = await store.deleteDraft(deps.db, auth.team.id, params.id);
      return { ...answer(row), deleted: true as const };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'sendBroadcast',
    method: 'post',
    path: '/broadcasts/{id}/send',
    summary: 'Send a broadcast',
    description: `Send a draft now or at \`scheduled_at\`. ${GATE} Of two sends at once exactly one starts; the other is 422 (no longer a draft).`,
    scope: 'broadcasts:write',
    params: broadcastParams,
    body: sendBody,
    response: ref('broadcast'),
    handler: async ({ auth, params, body, deps }) => {
      await store.mustGet(deps.db, auth.team.id, params.id);
      const row = await deps.db.transaction((trx) => sendBroadcast(trx, auth.team, params.id, body, new Date()));
      return answer(row);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'cancelBroadcast',
    method: 'post',
    path: '/broadcasts/{id}/cancel',
    summary: 'Cancel a broadcast',
    description:
      'Cancel a queued, scheduled or sending broadcast. A sending one stops before its next batch: the recipients of the batches already handed to delivery got it (listed by the recipients report), nobody else does.',
    scope: 'broadcasts:write',
    params: broadcastParams,
    response: ref('broadcast'),
    handler: async ({ auth, params, deps }) => answer(await store.cancelBroadcast(deps.db, auth.team.id, params.id)),
  }),
  defineOperation({
    ...base,
    operationId: 'duplicateBroadcast',
    method: 'post',
    path: '/broadcasts/{id}/duplicate',
    summary: 'Duplicate a broadcast',
    description: 'A new draft with the content of this broadcast (whatever its status).',
    scope: 'broadcasts:write',
    status: 201,
    params: broadcastParams,
    response: ref('broadcast'),
    handler: async ({ auth, params, deps }) => answer(await store.duplicateBroadcast(deps.db, auth.team.id, params.id)),
  }),
  defineOperation({
    ...base,
    operationId: 'listBroadcastRecipients',
    method: 'get',
    path: '/broadcasts/{id}/recipients',
    summary: "List a broadcast's recipients",
    description:
      "The broadcast's recipients whose copy was `sent` (handed to delivery), `delivered`, `opened`, `clicked` (humans only, with `count` and the `clicked_links`), `bounced` (with `bounce_type`), `complained` or `unsubscribed`; or the members left out as `suppressed`. Newest first.",
    scope: 'broadcasts:read',
    params: broadcastParams,
    query: recipientsQuery,
    response: listEnvelope(recipientItem),
    handler: async ({ auth, params, query, deps }) => {
      const row = await store.mustGet(deps.db, auth.team.id, params.id);
      const page = await recipientsPage(deps.db, row.id, query, query);
      return toList(page, (r) => ({
        id: r.id,
        contact_id: r.contact_id,
        email: r.email,
        ...(r.count !== undefined && r.count !== null ? { count: r.count } : {}),
        ...(r.bounce_type ? { bounce_type: r.bounce_type as 'permanent' } : {}),
        ...(query.type === 'clicked' ? { clicked_links: r.clicked_links ?? [] } : {}),
      }));
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listBroadcastClickedLinks',
    method: 'get',
    path: '/broadcasts/{id}/clicked-links',
    summary: "List a broadcast's clicked links",
    description:
      'The links the recipients clicked, with `clicks` and `unique_clicks` (recipients), humans only (link scanners and other machine hits are left out).',
    scope: 'broadcasts:read',
    params: broadcastParams,
    query: listQuery,
    response: listEnvelope(clickedLinkItem),
    handler: async ({ auth, params, query, deps }) => {
      const row = await store.mustGet(deps.db, auth.team.id, params.id);
      return toList(await clickedLinksPage(deps.db, row.id, query), (r) => r);
    },
  }),
];
