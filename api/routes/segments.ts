import { z } from 'zod';
import * as segments from '../../shared/segments/segments.ts';
import { countMatches, countMembers, pageMembers } from '../../shared/segments/membership.ts';
import { notFound } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { isoRequired } from '../../shared/time.ts';
import { defineOperation } from './operation.ts';
import { deleted, idParams, ref, timestamp } from './schemas.ts';
import { contactListItem, presentListItem } from './contact-schemas.ts';
import { filterDescription, filterExamples, segmentFilterField } from './segment-filter-docs.ts';

const segmentParams = idParams('segment');

export const segmentListItem = z
  .object({ id: z.uuid(), name: z.string(), created_at: timestamp })
  .meta({ id: 'SegmentListItem' });

const segment = z
  .object({
    object: z.literal('segment'),
    ...segmentListItem.shape,
    filter: segmentFilterField.nullable().describe('The filter, as written; null when members are added by hand only.'),
    count: z
      .number()
      .int()
      .describe('How many contacts are members of it: added by hand, or matched by its filter (each counted once).'),
  })
  .meta({ id: 'Segment' });

// Trimmed: a name is shown in lists, where surrounding spaces are never meant.
export const segmentName = z
  .string()
  .trim()
  .min(1)
  .max(segments.NAME_MAX_LENGTH)
  .describe(`1-${segments.NAME_MAX_LENGTH} characters, trimmed.`);

const filter = segmentFilterField
  .nullable()
  .optional()
  .describe(
    'Contacts that match it are members, besides those added by hand (the language: this operation’s description and the SegmentFilter schema); null: none.',
  );

export function presentSegment(row: segments.SegmentRow): z.input<typeof segmentListItem> {
  return { id: row.id, name: row.name, created_at: isoRequired(row.created_at) };
}

const base = { tag: 'segments', permission: 'full_access' } as const;

export const segmentOperations = [
  defineOperation({
    ...base,
    operationId: 'createSegment',
    method: 'post',
    path: '/segments',
    summary: 'Create a segment',
    description: `Create a segment. Its members are the contacts added to it by hand (\`POST /contacts/{id_or_email}/segments/{segment_id}\`) and, with a \`filter\`, every contact of the team the filter matches, now or later.\n\n${filterDescription}`,
    scope: 'segments:write',
    status: 201,
    body: z.object({ name: segmentName, filter }),
    examples: filterExamples,
    response: ref('segment').extend({ name: z.string() }).meta({ id: 'SegmentCreated' }),
    handler: async ({ auth, body, deps }) => {
      const row = await segments.createSegment(deps.db, auth.team.id, body);
      return { object: 'segment' as const, id: row.id, name: row.name };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'countSegmentFilter',
    method: 'post',
    path: '/segments/count',
    summary: 'Count the contacts a filter matches',
    description:
      "How many of the team's contacts a filter matches now, without saving a segment (the dashboard's live count as a filter is built). The filter is checked as `POST /segments` checks it: a refusal is a 422 naming its place (`filter.all.1.value`). Changes nothing.",
    scope: 'segments:read',
    role: 'viewer',
    body: z.object({ filter: segmentFilterField.describe('The filter to count (the language: `POST /segments`).') }),
    response: z
      .object({ object: z.literal('segment_count'), count: z.number().int().describe('Contacts matched now.') })
      .meta({ id: 'SegmentFilterCount' }),
    handler: async ({ auth, body, deps }) => ({
      object: 'segment_count' as const,
      count: await countMatches(deps.db, auth.team.id, body.filter),
    }),
  }),
  defineOperation({
    ...base,
    operationId: 'listSegments',
    method: 'get',
    path: '/segments',
    summary: 'List segments',
    description: "List the team's segments, newest first.",
    scope: 'segments:read',
    query: listQuery,
    response: listEnvelope(segmentListItem),
    handler: async ({ auth, query, deps }) =>
      toList(await segments.listSegments(deps.db, auth.team.id, query), presentSegment),
  }),
  defineOperation({
    ...base,
    operationId: 'getSegment',
    method: 'get',
    path: '/segments/{id}',
    summary: 'Retrieve a segment',
    description: 'Retrieve a segment with its filter and the number of its members (hand-added and matched).',
    scope: 'segments:read',
    params: segmentParams,
    response: segment,
    handler: async ({ auth, params, deps }) => {
      const row = await segments.getSegment(deps.db, auth.team.id, params.id);
      if (!row) throw notFound('Segment');
      const count = await countMembers(deps.db, row);
      return { object: 'segment' as const, ...presentSegment(row), filter: row.filter, count };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'updateSegment',
    method: 'patch',
    path: '/segments/{id}',
    summary: 'Update a segment',
    description:
      'Rename a segment, replace its filter (the filter language is described under `POST /segments`) or remove it with `filter: null`; a field left out stays as it is. Its hand-added members stay.',
    scope: 'segments:write',
    params: segmentParams,
    body: z
      .object({ name: segmentName.optional(), filter })
      .refine((b) => b.name !== undefined || b.filter !== undefined, {
        message: 'Required: a new `name`, a `filter`, or both',
        path: ['name'],
      }),
    response: ref('segment'),
    handler: async ({ auth, params, body, deps }) => {
      const row = await segments.updateSegment(deps.db, auth.team.id, params.id, body);
      if (!row) throw notFound('Segment');
      return { object: 'segment' as const, id: row.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'deleteSegment',
    method: 'delete',
    path: '/segments/{id}',
    summary: 'Delete a segment',
    description: 'Delete a segment and its memberships; its contacts stay.',
    scope: 'segments:write',
    params: segmentParams,
    response: deleted('segment'),
    handler: async ({ auth, params, deps }) => {
      const row = await segments.deleteSegment(deps.db, auth.team.id, params.id);
      if (!row) throw notFound('Segment');
      return { object: 'segment' as const, id: row.id, deleted: true as const };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listSegmentContacts',
    method: 'get',
    path: '/segments/{id}/contacts',
    summary: "List a segment's contacts",
    description:
      "The segment's contacts (added by hand or matched by its filter), newest first (the SDK's `contacts.list({segmentId})`).",
    scope: 'segments:read',
    params: segmentParams,
    query: listQuery,
    response: listEnvelope(contactListItem),
    handler: async ({ auth, params, query, deps }) => {
      const row = await segments.getSegment(deps.db, auth.team.id, params.id);
      if (!row) throw notFound('Segment');
      return toList(await pageMembers(deps.db, row, query), presentListItem);
    },
  }),
];
