// The SDK's older paths, where contacts lived in audiences: an audience is a segment (the same rows, the same ids).
// `/audiences[/{id}]` are segments under that name; `/audiences/{audience_id}/contacts[/{id_or_email}]` are the
// contacts that are members of it, by hand or by its filter (creating one there makes it a member by hand; a
// contact that is not one is 404 there).
import { z } from 'zod';
import type { Knex } from 'knex';
import * as contacts from '../../shared/contacts/contacts.ts';
import * as segments from '../../shared/segments/segments.ts';
import { isMember, pageMembers } from '../../shared/segments/membership.ts';
import { notFound } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { defineOperation } from './operation.ts';
import { deleted, timestamp } from './schemas.ts';
import { presentSegment, segmentName } from './segments.ts';
import { deletedContact } from './contacts.ts';
import {
  contact,
  contactChangeFields,
  contactFields,
  contactListItem,
  contactParams,
  presentContact,
  presentListItem,
} from './contact-schemas.ts';

// Strings, not UUIDs: a malformed id is then "Audience not found." from the handler (Resend's audiences are gone),
// not the router's 422.
const audienceParams = z.object({ id: z.string().max(100).describe("The audience's id (an audience is a segment).") });
const audienceContactsParams = z.object({
  audience_id: z.string().max(100).describe("The audience's id (an audience is a segment)."),
});
const audienceContactParams = audienceContactsParams.extend(contactParams.shape);

const audienceItem = z
  .object({ id: z.uuid(), name: z.string(), created_at: timestamp })
  .meta({ id: 'AudienceListItem' });

async function audienceOf(db: Knex, teamId: string, id: string): Promise<segments.SegmentRow> {
  const row = await segments.getSegment(db, teamId, id);
  if (!row) throw notFound('Audience');
  return row;
}

/** The contact named, when it is a member of the audience. */
async function memberOf(db: Knex, teamId: string, audienceId: string, idOrEmail: string) {
  const audience = await audienceOf(db, teamId, audienceId);
  const row = await contacts.findContact(db, teamId, idOrEmail);
  if (!row || !(await isMember(db, audience, row.id))) throw notFound('Contact');
  return row;
}

const audiences = { tag: 'segments', permission: 'full_access' } as const;
const members = { tag: 'contacts', permission: 'full_access' } as const;
const legacy = 'Legacy path (the SDK with `audienceId`): ';

export const audienceOperations = [
  defineOperation({
    ...audiences,
    operationId: 'createAudience',
    method: 'post',
    path: '/audiences',
    summary: 'Create an audience',
    description: 'Legacy name of `POST /segments`: creates a segment.',
    scope: 'segments:write',
    status: 201,
    body: z.object({ name: segmentName }),
    response: z
      .object({ object: z.literal('audience'), id: z.uuid(), name: z.string() })
      .meta({ id: 'AudienceCreated' }),
    handler: async ({ auth, body, deps }) => {
      const row = await segments.createSegment(deps.db, auth.team.id, body);
      return { object: 'audience' as const, id: row.id, name: row.name };
    },
  }),
  defineOperation({
    ...audiences,
    operationId: 'listAudiences',
    method: 'get',
    path: '/audiences',
    summary: 'List audiences',
    description: 'Legacy name of `GET /segments`: the segments, newest first.',
    scope: 'segments:read',
    query: listQuery,
    response: listEnvelope(audienceItem),
    handler: async ({ auth, query, deps }) =>
      toList(await segments.listSegments(deps.db, auth.team.id, query), presentSegment),
  }),
  defineOperation({
    ...audiences,
    operationId: 'getAudience',
    method: 'get',
    path: '/audiences/{id}',
    summary: 'Retrieve an audience',
    description: 'Legacy name of `GET /segments/{id}`.',
    scope: 'segments:read',
    params: audienceParams,
    response: z.object({ object: z.literal('audience'), ...audienceItem.shape }).meta({ id: 'Audience' }),
    handler: async ({ auth, params, deps }) => ({
      object: 'audience' as const,
      ...presentSegment(await audienceOf(deps.db, auth.team.id, params.id)),
    }),
  }),
  defineOperation({
    ...audiences,
    operationId: 'deleteAudience',
    method: 'delete',
    path: '/audiences/{id}',
    summary: 'Delete an audience',
    description: 'Legacy name of `DELETE /segments/{id}`: the segment and its memberships go, its contacts stay.',
    scope: 'segments:write',
    params: audienceParams,
    response: deleted('audience'),
    handler: async ({ auth, params, deps }) => {
      const row = await segments.deleteSegment(deps.db, auth.team.id, params.id);
      if (!row) throw notFound('Audience');
      return { object: 'audience' as const, id: row.id, deleted: true as const };
    },
  }),
  defineOperation({
    ...members,
    operationId: 'createAudienceContact',
    method: 'post',
    path: '/audiences/{audience_id}/contacts',
    summary: 'Create a contact in an audience',
    description: `${legacy}creates a contact as \`POST /contacts\` does, a member of the audience.`,
    scope: 'contacts:write',
    status: 201,
    params: audienceContactsParams,
    body: z.object(contactFields),
    response: z.object({ object: z.literal('contact'), id: z.uuid() }),
    handler: async ({ auth, params, body, deps }) => {
      const audience = await audienceOf(deps.db, auth.team.id, params.audience_id);
      const row = await contacts.createContact(deps.db, auth.team.id, {
        ...body,
        segments: [{ id: audience.id, path: 'audience_id' }],
      });
      await deps.contactJobs.contactsChanged(auth.team.id);
      return { object: 'contact' as const, id: row.id };
    },
  }),
  defineOperation({
    ...members,
    operationId: 'listAudienceContacts',
    method: 'get',
    path: '/audiences/{audience_id}/contacts',
    summary: "List an audience's contacts",
    description: `${legacy}the audience's contacts, newest first.`,
    scope: 'contacts:read',
    params: audienceContactsParams,
    query: listQuery,
    response: listEnvelope(contactListItem),
    handler: async ({ auth, params, query, deps }) => {
      const audience = await audienceOf(deps.db, auth.team.id, params.audience_id);
      return toList(await pageMembers(deps.db, audience, query), presentListItem);
    },
  }),
  defineOperation({
    ...members,
    operationId: 'getAudienceContact',
    method: 'get',
    path: '/audiences/{audience_id}/contacts/{id_or_email}',
    summary: 'Retrieve a contact of an audience',
    description: `${legacy}a contact of the audience, as \`GET /contacts/{id_or_email}\` answers it.`,
    scope: 'contacts:read',
    params: audienceContactParams,
    response: contact,
    handler: async ({ auth, params, deps }) =>
      presentContact(await memberOf(deps.db, auth.team.id, params.audience_id, params.id_or_email)),
  }),
  defineOperation({
    ...members,
    operationId: 'updateAudienceContact',
    method: 'patch',
    path: '/audiences/{audience_id}/contacts/{id_or_email}',
    summary: 'Update a contact of an audience',
    description: `${legacy}changes a contact of the audience as \`PATCH /contacts/{id_or_email}\` does.`,
    scope: 'contacts:write',
    params: audienceContactParams,
    body: z.object(contactChangeFields),
    response: z.object({ object: z.literal('contact'), id: z.uuid() }),
    handler: async ({ auth, params, body, deps }) => {
      const member = await memberOf(deps.db, auth.team.id, params.audience_id, params.id_or_email);
      const row = await contacts.updateContact(deps.db, auth.team.id, member.id, body);
      if (!row) throw notFound('Contact');
      await deps.contactJobs.contactsChanged(auth.team.id);
      return { object: 'contact' as const, id: row.id };
    },
  }),
  defineOperation({
    ...members,
    operationId: 'deleteAudienceContact',
    method: 'delete',
    path: '/audiences/{audience_id}/contacts/{id_or_email}',
    summary: 'Delete a contact of an audience',
    description: `${legacy}deletes a contact of the audience (the contact itself, from every segment) as \`DELETE /contacts/{id_or_email}\` does.`,
    scope: 'contacts:write',
    params: audienceContactParams,
    response: deletedContact,
    handler: async ({ auth, params, deps }) => {
      const member = await memberOf(deps.db, auth.team.id, params.audience_id, params.id_or_email);
      const row = await contacts.deleteContact(deps.db, auth.team.id, member.id);
      if (!row) throw notFound('Contact');
      return { object: 'contact' as const, id: row.id, contact: params.id_or_email, deleted: true as const };
    },
  }),
];
