import { z } from 'zod';
import * as properties from '../../shared/contacts/properties.ts';
import {
  KEY_MAX_LENGTH,
  KEY_PATTERN,
  propertyTypes,
  STRING_VALUE_MAX_LENGTH,
} from '../../shared/contacts/property-values.ts';
import { notFound } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { isoRequired } from '../../shared/time.ts';
import { defineOperation } from './operation.ts';
import { deleted, idParams, ref, timestamp } from './schemas.ts';

const propertyParams = idParams('contact property');

const type = z.enum(propertyTypes);
const value = z.union([z.string(), z.number(), z.boolean()]);

const listItem = z
  .object({
    id: z.uuid(),
    key: z.string(),
    type,
    fallback_value: value.nullable().describe('Shown for a contact with no value; null for none.'),
    created_at: timestamp,
  })
  .meta({ id: 'ContactPropertyListItem' });

const contactProperty = z
  .object({ object: z.literal('contact_property'), ...listItem.shape })
  .meta({ id: 'ContactProperty' });

const key = z
  .string()
  .regex(KEY_PATTERN, `must be 1-${KEY_MAX_LENGTH} letters, digits or underscores (and not __proto__)`)
  .describe(
    `1-${KEY_MAX_LENGTH} letters (A-Z, a-z), digits or underscores, not \`__proto__\`; unique in the team; fixed at creation.`,
  );
const fallback = value
  .nullable()
  .describe(
    `What a contact with no value is taken to have: a value of the property's type (strings up to ${STRING_VALUE_MAX_LENGTH} characters); null for none.`,
  );

function present(row: properties.ContactPropertyRow): z.input<typeof listItem> {
  return {
    id: row.id,
    key: row.key,
    type: row.type,
    fallback_value: row.fallback_value,
    created_at: isoRequired(row.created_at),
  };
}

const base = { tag: 'contact-properties', permission: 'full_access' } as const;

export const contactPropertyOperations = [
  defineOperation({
    ...base,
    operationId: 'createContactProperty',
    method: 'post',
    path: '/contact-properties',
    summary: 'Create a contact property',
    description:
      'Create a typed custom field for contacts: `string`, `number` or `boolean`, with an optional fallback value of that type. `key` and `type` cannot change afterwards.',
    scope: 'contact-properties:write',
    status: 201,
    body: z.object({
      key,
      type: type.describe('`string`, `number` or `boolean`; fixed at creation.'),
      fallback_value: fallback.optional(),
    }),
    response: ref('contact_property'),
    handler: async ({ auth, body, deps }) => {
      const row = await properties.createProperty(deps.db, auth.team.id, body);
      return { object: 'contact_property' as const, id: row.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listContactProperties',
    method: 'get',
    path: '/contact-properties',
    summary: 'List contact properties',
    description: "List the team's contact properties, newest first.",
    scope: 'contact-properties:read',
    query: listQuery,
    response: listEnvelope(listItem),
    handler: async ({ auth, query, deps }) =>
      toList(await properties.listProperties(deps.db, auth.team.id, query), present),
  }),
  defineOperation({
    ...base,
    operationId: 'getContactProperty',
    method: 'get',
    path: '/contact-properties/{id}',
    summary: 'Retrieve a contact property',
    description: 'Retrieve a contact property: its key, type and fallback value.',
    scope: 'contact-properties:read',
    params: propertyParams,
    response: contactProperty,
    handler: async ({ auth, params, deps }) => {
      const row = await properties.getProperty(deps.db, auth.team.id, params.id);
      if (!row) throw notFound('Contact property');
      return { object: 'contact_property' as const, ...present(row) };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'updateContactProperty',
    method: 'patch',
    path: '/contact-properties/{id}',
    summary: 'Update a contact property',
    description:
      "Change a property's fallback value. `key` and `type` may be sent as they are (the SDK may send them); another value is refused with 422.",
    scope: 'contact-properties:write',
    params: propertyParams,
    body: z.object({
      fallback_value: fallback.optional(),
      key: z.string().optional().describe('Fixed at creation: only its current value is accepted.'),
      type: type.optional().describe('Fixed at creation: only its current value is accepted.'),
    }),
    response: ref('contact_property'),
    handler: async ({ auth, params, body, deps }) => {
      const row = await properties.updateProperty(deps.db, auth.team.id, params.id, body);
      if (!row) throw notFound('Contact property');
      return { object: 'contact_property' as const, id: row.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'deleteContactProperty',
    method: 'delete',
    path: '/contact-properties/{id}',
    summary: 'Delete a contact property',
    description:
      "Delete a contact property and every contact's value of it (no `contact.updated` is recorded for them).",
    scope: 'contact-properties:write',
    params: propertyParams,
    response: deleted('contact_property'),
    handler: async ({ auth, params, deps }) => {
      const row = await properties.deleteProperty(deps.db, auth.team.id, params.id);
      if (!row) throw notFound('Contact property');
      return { object: 'contact_property' as const, id: row.id, deleted: true as const };
    },
  }),
];
