import { z } from 'zod';
import * as suppressions from '../../shared/suppressions/suppressions.ts';
import { notFound } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { defineOperation } from './operation.ts';
import { deleted, ref, timestamp } from './schemas.ts';

const listItem = z
  .object({
    id: z.uuid(),
    email: z.string(),
    origin: z.enum(suppressions.origins),
    source_id: z
      .uuid()
      .nullable()
      .describe('What caused it: the email that bounced or drew the complaint; null when added by hand.'),
    created_at: timestamp,
  })
  .meta({ id: 'SuppressionListItem' });

const suppression = z.object({ object: z.literal('suppression'), ...listItem.shape }).meta({ id: 'Suppression' });

/** An address as a client writes it; parsed to the stored form (trimmed, lower case), or an issue at its index. */
const address = z
  .string()
  .min(suppressions.EMAIL_MIN_LENGTH)
  .max(suppressions.EMAIL_MAX_LENGTH)
  .superRefine((value, ctx) => {
    // min/max above have already said so.
    if (value.length < suppressions.EMAIL_MIN_LENGTH || value.length > suppressions.EMAIL_MAX_LENGTH) return;
    const problem = suppressions.addressProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform(suppressions.canonicalAddress);

const batch = <T extends z.ZodType>(item: T) => z.array(item).min(1).max(100);

const idOrEmailParams = z.object({
  id_or_email: z
    .string()
    .max(1000)
    .describe('A suppression id, or the suppressed address (URL-encoded; matched case-insensitively).'),
});

/** A list item is what a `suppression.*` event carries. */
const present = (row: suppressions.SuppressionRow): z.input<typeof listItem> => suppressions.suppressionEventData(row);

const base = { tag: 'suppressions', permission: 'full_access' } as const;

export const suppressionOperations = [
  defineOperation({
    ...base,
    operationId: 'createSuppression',
    method: 'post',
    path: '/suppressions',
    summary: 'Suppress an address',
    description: 'Suppress an address by hand (origin `manual`); an address already suppressed keeps its entry.',
    scope: 'suppressions:write',
    status: 201,
    body: z.object({ email: address.describe('The address to suppress; stored trimmed and in lower case') }),
    response: ref('suppression'),
    handler: async ({ auth, body, deps }) => {
      const { row } = await suppressions.addSuppression(deps.db, auth.team.id, { email: body.email, origin: 'manual' });
      return { object: 'suppression' as const, id: row.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listSuppressions',
    method: 'get',
    path: '/suppressions',
    summary: 'List suppressions',
    description: "List the team's suppressed addresses, newest first, optionally of one origin.",
    scope: 'suppressions:read',
    query: listQuery.safeExtend({
      origin: z.enum(suppressions.origins).optional().describe('Only suppressions of this origin.'),
    }),
    response: listEnvelope(listItem),
    handler: async ({ auth, query, deps }) => {
      const page = await suppressions.listSuppressions(deps.db, auth.team.id, query);
      return toList(page, present);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getSuppression',
    method: 'get',
    path: '/suppressions/{id_or_email}',
    summary: 'Retrieve a suppression',
    description: 'Retrieve a suppression by id or by address.',
    scope: 'suppressions:read',
    params: idOrEmailParams,
    response: suppression,
    handler: async ({ auth, params, deps }) => {
      const row = await suppressions.findSuppression(deps.db, auth.team.id, params.id_or_email);
      if (!row) throw notFound('Suppression');
      return { object: 'suppression' as const, ...present(row) };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'deleteSuppression',
    method: 'delete',
    path: '/suppressions/{id_or_email}',
    summary: 'Lift a suppression',
    description: 'Lift a suppression named by id or by address; the address can be sent to again.',
    scope: 'suppressions:write',
    params: idOrEmailParams,
    response: deleted('suppression'),
    handler: async ({ auth, params, deps }) => {
      const row = await suppressions.removeSuppression(deps.db, auth.team.id, params.id_or_email);
      if (!row) throw notFound('Suppression');
      return { object: 'suppression' as const, id: row.id, deleted: true as const };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'addSuppressionsBatch',
    method: 'post',
    path: '/suppressions/batch/add',
    summary: 'Suppress addresses in a batch',
    description: 'Suppress 1-100 addresses by hand, all or none; one entry per address, in order.',
    scope: 'suppressions:write',
    status: 201,
    body: z.object({ emails: batch(address).describe('1-100 addresses to suppress') }),
    response: z.object({ data: z.array(ref('suppression')) }).meta({ id: 'SuppressionBatchAdded' }),
    handler: async ({ auth, body, deps }) => {
      const added = await suppressions.addSuppressions(
        deps.db,
        auth.team.id,
        body.emails.map((email) => ({ email, origin: 'manual' as const })),
      );
      return { data: added.map(({ row }) => ({ object: 'suppression' as const, id: row.id })) };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'removeSuppressionsBatch',
    method: 'post',
    path: '/suppressions/batch/remove',
    summary: 'Lift suppressions in a batch',
    description:
      'Lift suppressions named by address (1-100) and/or id (1-100); one entry per item, addresses first, in order. ' +
      '`deleted` is false for an item that removed nothing (unknown, or already removed by an earlier item).',
    scope: 'suppressions:write',
    body: z
      .object({
        emails: batch(address).optional().describe('1-100 suppressed addresses to lift'),
        ids: batch(z.uuid()).optional().describe('1-100 suppression ids to lift'),
      })
      .refine((b) => b.emails !== undefined || b.ids !== undefined, {
        message: 'give `emails`, `ids` or both',
        path: ['emails'],
      }),
    response: z
      .object({
        data: z.array(z.object({ object: z.literal('suppression'), id: z.uuid().optional(), deleted: z.boolean() })),
      })
      .meta({ id: 'SuppressionBatchRemoved' }),
    handler: async ({ auth, body, deps }) => {
      const emails = body.emails ?? [];
      const ids = body.ids ?? [];
      const removed = await suppressions.removeSuppressions(deps.db, auth.team.id, [...emails, ...ids]);
      return {
        data: removed.map((row, i) => {
          // An unknown id is echoed back; an unknown address has no id to give.
          const id = row?.id ?? (i >= emails.length ? ids[i - emails.length] : undefined);
          return { object: 'suppression' as const, ...(id ? { id } : {}), deleted: row !== null };
        }),
      };
    },
  }),
];
