// A contact's segment memberships, added and removed by hand.
import { z } from 'zod';
import { findContact } from '../../shared/contacts/contacts.ts';
import * as memberships from '../../shared/contacts/memberships.ts';
import { notFound, ServiceError } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { isoRequired } from '../../shared/time.ts';
import { defineOperation } from './operation.ts';
import { timestamp } from './schemas.ts';
import { contactParams } from './contact-schemas.ts';

const membershipParams = contactParams.extend({
  segment_id: z.string().max(100).describe("The segment's id."),
});

const membership = z
  .object({ object: z.literal('contact_segment'), contact_id: z.uuid(), segment_id: z.uuid() })
  .meta({ id: 'ContactSegment' });

const segmentItem = z
  .object({ id: z.uuid(), name: z.string(), created_at: timestamp.describe('When the contact was added to it.') })
  .meta({ id: 'ContactSegmentListItem' });

const base = { tag: 'contacts', permission: 'full_access' } as const;

export const contactSegmentOperations = [
  defineOperation({
    ...base,
    operationId: 'listContactSegments',
    method: 'get',
    path: '/contacts/{id_or_email}/segments',
    summary: "List a contact's segments",
    description: 'The segments a contact is a member of, newest segment first.',
    scope: 'contacts:read',
    params: contactParams,
    query: listQuery,
    response: listEnvelope(segmentItem),
    handler: async ({ auth, params, query, deps }) => {
      const contact = await findContact(deps.db, auth.team.id, params.id_or_email);
      if (!contact) throw notFound('Contact');
      const page = await memberships.listContactSegments(deps.db, contact.id, query);
      return toList(page, (row) => ({ id: row.id, name: row.name, created_at: isoRequired(row.created_at) }));
    },
  }),
  defineOperation({
    ...base,
    operationId: 'addContactToSegment',
    method: 'post',
    path: '/contacts/{id_or_email}/segments/{segment_id}',
    summary: 'Add a contact to a segment',
    description:
      'Make the contact a member of the segment (a member already stays one); records `contact.updated` when it was not one.',
    scope: 'contacts:write',
    status: 201,
    params: membershipParams,
    response: membership,
    handler: async ({ auth, params, deps }) => {
      const added = await memberships.addToSegment(deps.db, auth.team.id, params.id_or_email, params.segment_id);
      return { object: 'contact_segment' as const, contact_id: added.contact.id, segment_id: added.segmentId };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'removeContactFromSegment',
    method: 'delete',
    path: '/contacts/{id_or_email}/segments/{segment_id}',
    summary: 'Remove a contact from a segment',
    description:
      "End the contact's membership of the segment (the contact stays); records `contact.updated`. A contact that is not a member is 404.",
    scope: 'contacts:write',
    params: membershipParams,
    response: membership.extend({ deleted: z.literal(true) }).meta({ id: 'ContactSegmentDeleted' }),
    handler: async ({ auth, params, deps }) => {
      const removed = await memberships.removeFromSegment(deps.db, auth.team.id, params.id_or_email, params.segment_id);
      if (!removed.changed) throw new ServiceError('not_found', 'The contact is not a member of this segment.');
      return {
        object: 'contact_segment' as const,
        contact_id: removed.contact.id,
        segment_id: removed.segmentId,
        deleted: true as const,
      };
    },
  }),
];
