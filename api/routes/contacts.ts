import { z } from 'zod';
import * as contacts from '../../shared/contacts/contacts.ts';
import { fieldError } from '../../shared/contacts/property-values.ts';
import { getSegment } from '../../shared/segments/segments.ts';
import { pageMembers } from '../../shared/segments/membership.ts';
import { notFound } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { defineOperation } from './operation.ts';
import { ref } from './schemas.ts';
import {
  contact,
  contactChangeFields,
  contactFields,
  contactListItem,
  contactParams,
  presentContact,
  presentListItem,
  segmentList,
  segmentRefs,
  topicChoice,
  topicRefs,
} from './contact-schemas.ts';

const createBody = z.object({
  ...contactFields,
  segments: segmentList
    .optional()
    .describe('Segments to add the contact to: up to 100 ids, each a string or `{id}` (both forms are accepted).'),
  topics: z
    .array(topicChoice)
    .max(100)
    .optional()
    .describe("The contact's topic choices; a topic named twice takes the last choice."),
  audience_id: z
    .string()
    .max(100)
    .optional()
    .describe('Legacy (an audience is a segment): one more segment to add the contact to.'),
});

/** The deletion answer: `id` as every delete answers, and `contact` (the id or address as given) as the SDK reads. */
export const deletedContact = z
  .object({
    object: z.literal('contact'),
    id: z.uuid(),
    contact: z.string().describe('The id or address the request named the contact by.'),
    deleted: z.literal(true),
  })
  .meta({ id: 'ContactDeleted' });

const base = { tag: 'contacts', permission: 'full_access' } as const;

export const contactOperations = [
  defineOperation({
    ...base,
    operationId: 'createContact',
    method: 'post',
    path: '/contacts',
    summary: 'Create a contact',
    description:
      'Create a contact, with its segments and topic choices, all or nothing; records `contact.created`. An address already a contact of the team is 422 naming `email`.',
    scope: 'contacts:write',
    status: 201,
    body: createBody,
    response: ref('contact'),
    handler: async ({ auth, body, deps }) => {
      const segments = segmentRefs(body.segments);
      if (body.audience_id !== undefined) segments.push({ id: body.audience_id, path: 'audience_id' });
      const row = await contacts.createContact(deps.db, auth.team.id, {
        ...body,
        segments,
        topics: topicRefs(body.topics),
      });
      // The period's billable peak is counted again shortly (at once, in the create, on a team with an allowance).
      await deps.contactJobs.contactsChanged(auth.team.id);
      return { object: 'contact' as const, id: row.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listContacts',
    method: 'get',
    path: '/contacts',
    summary: 'List contacts',
    description:
      "List the team's contacts, newest first; with `segment_id`, only that segment's members (added by hand or matched by its filter); with `search`, only those (of the segment, with both) whose address or name contains the text.",
    scope: 'contacts:read',
    query: listQuery.safeExtend({
      segment_id: z.string().max(100).optional().describe("Only this segment's contacts."),
      audience_id: z.string().max(100).optional().describe('Legacy name of `segment_id` (an audience is a segment).'),
      search: z
        .string()
        .min(1)
        .max(contacts.SEARCH_MAX_LENGTH)
        .optional()
        .describe(
          `1-${contacts.SEARCH_MAX_LENGTH} characters: a case-insensitive substring of the address, first or last name; \`%\` and \`_\` match literally. With \`segment_id\`, among the segment's members.`,
        ),
    }),
    response: listEnvelope(contactListItem),
    handler: async ({ auth, query, deps }) => {
      const [field, id] =
        query.segment_id !== undefined ? ['segment_id', query.segment_id] : ['audience_id', query.audience_id];
      if (id === undefined) return toList(await contacts.listContacts(deps.db, auth.team.id, query), presentListItem);
      const segment = await getSegment(deps.db, auth.team.id, id);
      if (!segment) throw fieldError(field, `no segment of this team has the id ${id}`);
      return toList(await pageMembers(deps.db, segment, query), presentListItem);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getContact',
    method: 'get',
    path: '/contacts/{id_or_email}',
    summary: 'Retrieve a contact',
    description: 'Retrieve a contact by id or by address, with its property values.',
    scope: 'contacts:read',
    params: contactParams,
    response: contact,
    handler: async ({ auth, params, deps }) => {
      const row = await contacts.findContact(deps.db, auth.team.id, params.id_or_email);
      if (!row) throw notFound('Contact');
      return presentContact(row);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'updateContact',
    method: 'patch',
    path: '/contacts/{id_or_email}',
    summary: 'Update a contact',
    description:
      "Change a contact's address, names, `unsubscribed` or properties (merged: a null removes one); records `contact.updated` when something changed.",
    scope: 'contacts:write',
    params: contactParams,
    body: z.object(contactChangeFields),
    response: ref('contact'),
    handler: async ({ auth, params, body, deps }) => {
      const row = await contacts.updateContact(deps.db, auth.team.id, params.id_or_email, body);
      if (!row) throw notFound('Contact');
      await deps.contactJobs.contactsChanged(auth.team.id);
      return { object: 'contact' as const, id: row.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'deleteContact',
    method: 'delete',
    path: '/contacts/{id_or_email}',
    summary: 'Delete a contact',
    description:
      "Delete a contact and its segment memberships; records `contact.deleted`. The address's topic choices stay (an opt-out still holds).",
    scope: 'contacts:write',
    params: contactParams,
    response: deletedContact,
    handler: async ({ auth, params, deps }) => {
      const row = await contacts.deleteContact(deps.db, auth.team.id, params.id_or_email);
      if (!row) throw notFound('Contact');
      return { object: 'contact' as const, id: row.id, contact: params.id_or_email, deleted: true as const };
    },
  }),
];
