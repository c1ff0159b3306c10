// One batch of an import's rows written in the caller's transaction (shared/imports/run.ts commits it together with
// the import's progress): the new addresses copied in (shared/imports/copy.ts) or inserted past those that exist,
// the existing ones updated or skipped as `on_conflict` says, then the import's topic choices and segment
// memberships for every contact imported. An
// address given twice in the file is one contact: its first row decides created, updated or skipped; each later
// row counts as updated (upsert, its values applied over the earlier ones) or skipped. No `contact.*` event is
// recorded (interface spec, Events 7).
import type { Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { newId } from '../ids.ts';
import type { PropertyValue } from '../contacts/property-values.ts';
import type { ImportedContact, RowResult } from './rows.ts';
import type { ImportRow } from './store.ts';
import { allowanceReason } from '../contacts/allowance.ts';
import { newContactsBillable } from './batch-allowance.ts';
import { copyContacts } from './copy.ts';
import type pg from 'pg';

export interface BatchRow {
  /** The row's number in the file (the header is row 1). */
  row: number;
  result: RowResult;
}

export interface BatchFailure {
  row: number;
  email: string | null;
  reason: string;
}

/** How the run writes new contacts, carried from batch to batch: COPY until a batch meets existing contacts. */
export interface WriteMode {
  copy: boolean;
}

export interface BatchOutcome {
  created: number;
  updated: number;
  skipped: number;
  failures: BatchFailure[];
}

/** One address of the batch: its contact (merged over its rows under upsert) and the rows that gave it. */
interface Address {
  key: string;
  contact: ImportedContact;
  rows: number[];
}

function merge(a: ImportedContact, b: ImportedContact): ImportedContact {
  return {
    email: a.email,
    first_name: b.first_name ?? a.first_name,
    last_name: b.last_name ?? a.last_name,
    unsubscribed: b.unsubscribed ?? a.unsubscribed,
    never_subscribed: b.never_subscribed ?? a.never_subscribed,
    properties: { ...a.properties, ...b.properties },
  };
}

/** The batch's rows by address (lower case), in the order first seen; failed rows apart. */
function group(rows: BatchRow[], upsert: boolean, gone: Set<string>) {
  const addresses = new Map<string, Address>();
  const failures: BatchFailure[] = [];
  for (const { row, result } of rows) {
    if ('failure' in result) {
      failures.push({ row, ...result.failure });
      continue;
    }
    const missing = Object.keys(result.contact.properties).find((k) => gone.has(k));
    if (missing) {
      failures.push({
        row,
        email: result.contact.email,
        reason: `has a value for the property \`${missing}\`, which was deleted`,
      });
      continue;
    }
    const key = result.contact.email.toLowerCase();
    const seen = addresses.get(key);
    if (!seen) addresses.set(key, { key, contact: result.contact, rows: [row] });
    else {
      seen.rows.push(row);
      if (upsert) seen.contact = merge(seen.contact, result.contact);
    }
  }
  return { addresses: [...addresses.values()], failures };
}

const column = <T>(list: Address[], pick: (c: ImportedContact) => T) => list.map((a) => pick(a.contact));
const json = (p: Record<string, PropertyValue>) => JSON.stringify(p);

/** The statement's rows as arrays, one per column (pg sends an array with nulls as an array literal). */
function columns(list: Address[]): Knex.RawBinding[] {
  return [
    list.map(() => newId()),
    column(list, (c) => c.email),
    column(list, (c) => c.first_name),
    column(list, (c) => c.last_name),
    column(list, (c) => c.unsubscribed),
    column(list, (c) => c.never_subscribed ?? null),
    column(list, (c) => json(c.properties)),
  ] as never[];
}

/**
 * `n` UUID v7 ids (time-ordered, as newId's), their random bits drawn at once: one call to the system's random source
 * per batch instead of one per 16 ids. Ids made in the same millisecond are not ordered among themselves.
 */
function newIds(n: number): string[] {
  const random = randomBytes(16 * n);
  const msecs = Date.now();
  return Array.from({ length: n }, (_, i) => uuidv7({ msecs, random: random.subarray(16 * i, 16 * i + 16) }));
}

const INPUT = `unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::boolean[], ?::boolean[], ?::text[])
  as i(id, email, first_name, last_name, unsubscribed, never_subscribed, properties)`;

/**
 * The new addresses of `list`. COPY first when the last batch needed no fallback (an import of new contacts, the
 * common case: about twice as fast); when an address in it is already a contact, the COPY stops at it, is rolled
 * back, and the batch is inserted skipping those that exist (so is the next batch, until one finds no contact).
 */
async function insertNew(trx: Knex, conn: pg.ClientBase, teamId: string, list: Address[], mode: WriteMode) {
  const created = new Map<string, string>();
  if (list.length === 0) return created;
  if (mode.copy) {
    const ids = newIds(list.length);
    if (
      await copyContacts(
        trx,
        conn,
        teamId,
        list.map((a) => a.contact),
        ids,
      )
    ) {
      list.forEach((a, i) => created.set(a.key, ids[i]));
      return created;
    }
  }
  const inserted = await trx.raw(
    `insert into contacts (id, team_id, email, first_name, last_name, unsubscribed, never_subscribed, properties)
    select i.id, ?, i.email, i.first_name, i.last_name, coalesce(i.unsubscribed, false),
      coalesce(i.never_subscribed, false), i.properties::jsonb
    from ${INPUT} on conflict (team_id, lower(email)) do nothing returning id, lower(email) as l`,
    [teamId, ...columns(list)],
  );
  for (const r of inserted.rows) created.set(r.l, r.id);
  mode.copy = created.size === list.length;
  return created;
}

/** Updates existing contacts with the rows' values (what a row leaves empty stays; properties are merged). */
async function updateExisting(trx: Knex, teamId: string, list: Address[]) {
  const updated = new Map<string, string>();
  if (list.length === 0) return updated;
  // One index probe per row (the unique index on the address): the planner, its statistics behind a bulk import,
  // would otherwise hash the team's every contact for each batch.
  await trx.raw('set local enable_hashjoin = off; set local enable_mergejoin = off');
  const { rows } = await trx.raw(
    `update contacts c set
      first_name = coalesce(i.first_name, c.first_name), last_name = coalesce(i.last_name, c.last_name),
      unsubscribed = coalesce(i.unsubscribed, c.unsubscribed),
      never_subscribed = coalesce(i.never_subscribed, c.never_subscribed), properties = c.properties || i.properties::jsonb,
      updated_at = now()
    from ${INPUT} where c.team_id = ? and lower(c.email) = lower(i.email) returning c.id, lower(c.email) as l`,
    [...columns(list), teamId],
  );
  await trx.raw('set local enable_hashjoin = on; set local enable_mergejoin = on');
  for (const r of rows) updated.set(r.l, r.id);
  return updated;
}

/** Creates the new addresses and, under upsert, updates the existing ones; answers the ids by address. */
async function writeContacts(trx: Knex, conn: pg.ClientBase, imp: ImportRow, list: Address[], mode: WriteMode) {
  const created = await insertNew(trx, conn, imp.team_id, list, mode);
  const updated =
    imp.on_conflict === 'upsert'
      ? await updateExisting(
          trx,
          imp.team_id,
          list.filter((a) => !created.has(a.key)),
        )
      : new Map<string, string>();
  return { created, updated };
}

/** The import's topic choices and segments for the contacts it wrote. */
async function applyChoices(trx: Knex, imp: ImportRow, written: Address[], ids: string[]) {
  if (imp.topics.length && written.length) {
    // A row that says unsubscribed or never_subscribed is never opted in by the import (spec: never stored as more
    // subscribed than the row says); its opt-outs are recorded.
    await trx.raw(
      `insert into topic_subscriptions (topic_id, team_id, email, subscription, updated_at)
      select t.id, t.team_id, x.email, c.subscription, now()
      from unnest(?::text[], ?::boolean[]) as x(email, allow_in)
      cross join unnest(?::uuid[], ?::text[]) as c(topic_id, subscription)
      join topics t on t.id = c.topic_id and t.team_id = ?
      where c.subscription = 'opt_out' or x.allow_in
      on conflict (topic_id, email) do update
        set subscription = excluded.subscription, source_email_id = null, updated_at = now()`,
      [
        written.map((a) => a.key),
        written.map((a) => a.contact.unsubscribed !== true && a.contact.never_subscribed !== true) as never,
        imp.topics.map((t) => t.id),
        imp.topics.map((t) => t.subscription),
        imp.team_id,
      ],
    );
  }
  // A never_subscribed row opts out of every topic that would otherwise reach it by its opt_in default (or by an
  // earlier opt_in choice): never stored as more subscribed than it says. A later choice of its own opts it in.
  const never = written.filter((a) => a.contact.never_subscribed === true).map((a) => a.key);
  if (never.length)
    await trx.raw(
      `insert into topic_subscriptions (topic_id, team_id, email, subscription, updated_at)
      select t.id, t.team_id, x.email, 'opt_out', now() from unnest(?::text[]) as x(email)
      cross join topics t where t.team_id = ?
        and (t.default_subscription = 'opt_in' or t.id = any(?::uuid[]) or exists (select 1 from topic_subscriptions s
          where s.topic_id = t.id and s.email = x.email and s.subscription = 'opt_in'))
      on conflict (topic_id, email) do update set subscription = 'opt_out', source_email_id = null, updated_at = now()`,
      [never, imp.team_id, imp.topics.map((t) => t.id)],
    );
  if (imp.segment_ids.length && ids.length) {
    await trx.raw(
      `insert into contact_segments (segment_id, contact_id, team_id)
      select s.id, c.id, s.team_id from unnest(?::uuid[]) as c(id)
      cross join segments s where s.id = any(?::uuid[]) and s.team_id = ?
      on conflict (segment_id, contact_id) do nothing`,
      [ids, imp.segment_ids, imp.team_id],
    );
  }
}

/**
 * Writes `rows` (consecutive rows of the file) for import `imp` in `trx`, whose connection is `conn`. `included` is
 * the team's allowance (0: none), taken under its lock; `gone` the mapped property keys deleted since the import
 * began; `mode` how new contacts are written (updated for the next batch).
 */
export async function writeBatch(
  trx: Knex,
  conn: pg.ClientBase,
  imp: ImportRow,
  rows: BatchRow[],
  included: number,
  gone: Set<string>,
  mode: WriteMode,
): Promise<BatchOutcome> {
  const upsert = imp.on_conflict === 'upsert';
  const grouped = group(rows, upsert, gone);
  let addresses = grouped.addresses;
  const failures = grouped.failures;
  if (included > 0) {
    const refused = await newContactsBillable(trx, imp, addresses, included);
    if (refused.size) {
      for (const a of addresses.filter((x) => refused.has(x.key)))
        for (const row of a.rows)
          failures.push({ row, email: a.contact.email, reason: `is past ${allowanceReason(included)}` });
      addresses = addresses.filter((a) => !refused.has(a.key));
    }
  }
  const { created, updated } = await writeContacts(trx, conn, imp, addresses, mode);
  const written = addresses.filter((a) => created.has(a.key) || updated.has(a.key));
  await applyChoices(trx, imp, written, [...created.values(), ...updated.values()]);

  const outcome: BatchOutcome = { created: 0, updated: 0, skipped: 0, failures };
  for (const a of addresses) {
    if (created.has(a.key)) outcome.created++;
    else if (updated.has(a.key)) outcome.updated++;
    else outcome.skipped++;
    const later = a.rows.length - 1;
    if (upsert) outcome.updated += later;
    else outcome.skipped += later;
  }
  failures.sort((a, b) => a.row - b.row);
  return outcome;
}
