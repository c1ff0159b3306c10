// Schemas the contact routes share (contacts, their memberships and topics, the audiences' contact paths): the
// answers' shapes and the request fields a contact is written with.
import { z } from 'zod';
import type { ContactRow } from '../../shared/contacts/rows.ts';
import { EMAIL_MAX_LENGTH, EMAIL_MIN_LENGTH } from '../../shared/contacts/address.ts';
import type { Ref, TopicChoiceRef } from '../../shared/contacts/references.ts';
import { VALUES_MAX_COUNT } from '../../shared/contacts/property-values.ts';
import { subscriptions } from '../../shared/topics/topics.ts';
import { isoRequired } from '../../shared/time.ts';
import { timestamp } from './schemas.ts';

export const PERSON_NAME_MAX_LENGTH = 256;

export const contactParams = z.object({
  id_or_email: z
    .string()
    .max(1000)
    .describe("The contact's id, or its address (URL-encoded; matched without regard to case)."),
});

export const contactListItem = z
  .object({
    id: z.uuid(),
    email: z.string().describe('As given, the domain in lower case and in its ASCII (IDNA) form.'),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    created_at: timestamp,
    unsubscribed: z.boolean().describe('Unsubscribed from everything the team sends to its contacts.'),
  })
  .meta({ id: 'ContactListItem' });

const propertyValue = z
  .union([
    z.object({ type: z.literal('string'), value: z.string() }),
    z.object({ type: z.literal('number'), value: z.number() }),
    z.object({ type: z.literal('boolean'), value: z.boolean() }),
  ])
  .meta({ id: 'ContactPropertyValue' });

export const contact = z
  .object({
    object: z.literal('contact'),
    ...contactListItem.shape,
    never_subscribed: z
      .boolean()
      .describe(
        "An import said `never_subscribed` (it never opted in): not unsubscribed, but no topic's `opt_in` default reaches it, only a choice of its own (POST /contacts/imports, `subscription_status`). False for every contact made otherwise.",
      ),
    properties: z
      .record(z.string(), propertyValue)
      .describe("The contact's property values by key, each with its property's type; unset properties are absent."),
  })
  .meta({ id: 'Contact' });

export function presentListItem(row: ContactRow): z.input<typeof contactListItem> {
  return {
    id: row.id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    created_at: isoRequired(row.created_at),
    unsubscribed: row.unsubscribed,
  };
}

export function presentContact(row: ContactRow): z.input<typeof contact> {
  // A stored value always has its property's type (checked when written), so the JSON type names it.
  const properties = Object.fromEntries(
    Object.entries(row.properties).map(([key, value]) => [key, { type: typeof value, value }]),
  ) as z.input<typeof contact>['properties'];
  return { object: 'contact', ...presentListItem(row), never_subscribed: row.never_subscribed === true, properties };
}

const personName = (which: string) =>
  z
    .string()
    .max(PERSON_NAME_MAX_LENGTH)
    .nullable()
    .transform((v) => (v === null ? null : v.trim() || null))
    .describe(
      `The contact's ${which} name, up to ${PERSON_NAME_MAX_LENGTH} characters, trimmed; null or empty for none.`,
    );

const propertyValues = (what: string) =>
  z
    .record(
      z.string(),
      z
        .union([z.string(), z.number(), z.boolean(), z.null()])
        .describe('A value of the property’s type; null for none.'),
    )
    .refine((values) => Object.keys(values).length <= VALUES_MAX_COUNT, `at most ${VALUES_MAX_COUNT} values`)
    .describe(
      `${what} Up to ${VALUES_MAX_COUNT}; each key must be a contact property of the team and each value of its type (else 422 naming \`properties.<key>\`).`,
    );

/** The fields a contact is created with (POST /contacts, and an audience's contacts). */
export const contactFields = {
  email: z
    .string()
    .describe(
      `The address, ${EMAIL_MIN_LENGTH}-${EMAIL_MAX_LENGTH} characters; stored with its domain in lower case and in ASCII (IDNA), unique in the team without regard to case.`,
    ),
  first_name: personName('first').optional(),
  last_name: personName('last').optional(),
  unsubscribed: z
    .boolean()
    .optional()
    .describe('Unsubscribed from everything the team sends to its contacts (default false).'),
  properties: propertyValues('Property values by key.').optional(),
};

/** What PATCH changes: absent fields stay as they are. */
export const contactChangeFields = {
  email: contactFields.email.optional().describe('A new address for the contact, free in the team.'),
  first_name: personName('first').optional(),
  last_name: personName('last').optional(),
  unsubscribed: contactFields.unsubscribed.describe('Unsubscribed from everything the team sends to its contacts.'),
  properties: propertyValues('Values to set (merged into the contact’s); null removes a value.').optional(),
};

export const topicChoice = z.object({
  id: z.string().max(100).describe("A topic's id."),
  subscription: z.enum(subscriptions).describe('`opt_in` or `opt_out`.'),
});

/** `topics` of a request as references naming their fields (`topics.0.id`). */
export function topicRefs(topics: z.output<typeof topicChoice>[] | undefined): TopicChoiceRef[] {
  return (topics ?? []).map((t, i) => ({ id: t.id, subscription: t.subscription, path: `topics.${i}.id` }));
}

export const segmentList = z
  .array(
    z.union([
      z.string().max(100).describe("A segment's id."),
      z.object({ id: z.string().max(100).describe("A segment's id.") }),
    ]),
  )
  .max(100);

/** `segments` of a request (ids, or objects with an id) as references naming their fields. */
export function segmentRefs(segments: z.output<typeof segmentList> | undefined): Ref[] {
  return (segments ?? []).map((s, i) =>
    typeof s === 'string' ? { id: s, path: `segments.${i}` } : { id: s.id, path: `segments.${i}.id` },
  );
}

/** `contact.created`, `contact.updated`, `contact.deleted`: the payload's `data` (shared/contacts/events.ts). */
export const contactEventData = z
  .object({
    id: z.uuid().describe("The contact's id."),
    email: z.string().describe("The contact's address."),
    first_name: z.string().nullable().describe("The contact's first name, or null."),
    last_name: z.string().nullable().describe("The contact's last name, or null."),
    unsubscribed: z.boolean().describe('Unsubscribed from everything the team sends to its contacts.'),
    segment_ids: z
      .array(z.uuid())
      .describe('The segments the contact is a member of (for `contact.deleted`: was, before the deletion).'),
    created_at: timestamp.describe('When the contact was created.'),
    updated_at: timestamp.describe('When the contact last changed (for `contact.deleted`: before the deletion).'),
  })
  .meta({ id: 'ContactEventData' });
