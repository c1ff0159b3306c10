// One batch of an import's rows written in the caller's transaction (shared/imports/run.ts commits it together with
// the import's progress): the contacts in one statement (new ones inserted, existing ones updated or skipped as
// `on_conflict` says), then the import's topic choices and segment memberships for every contact imported. An
// address given twice in the file is one contact: its first row decides created, updated or skipped; each later
// row counts as updated (upsert, its values applied over the earlier ones) or skipped. No `contact.*` event is
// recorded (interface spec, Events 7).
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import type { PropertyValue } from '../contacts/property-values.ts';
import type { ImportedContact, RowResult } from './rows.ts';
import type { ImportRow } from './store.ts';
import { allowanceReason } from '../contacts/allowance.ts';
import { newContactsBillable } from './batch-allowance.ts';

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

/** Inserts the new addresses and, under upsert, updates the existing ones; answers the ids by address. */
async function writeContacts(trx: Knex, imp: ImportRow, list: Address[]) {
  const input = `unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::boolean[], ?::text[])
    as i(id, email, first_name, last_name, unsubscribed, properties)`;
  // Arrays with nulls: pg sends them as array literals (knex's types know only arrays of strings).
  const bindings: Knex.RawBinding[] = [
    list.map(() => newId()),
    column(list, (c) => c.email),
    column(list, (c) => c.first_name),
    column(list, (c) => c.last_name),
    column(list, (c) => c.unsubscribed),
    column(list, (c) => json(c.properties)),
  ] as never[];
  const insert = `insert into contacts (id, team_id, email, first_name, last_name, unsubscribed, properties)
    select i.id, ?, i.email, i.first_name, i.last_name, coalesce(i.unsubscribed, false), i.properties::jsonb from ${input}
    on conflict (team_id, lower(email)) do nothing returning id, lower(email) as l`;
  const update = `update contacts c set
      first_name = coalesce(i.first_name, c.first_name), last_name = coalesce(i.last_name, c.last_name),
      unsubscribed = coalesce(i.unsubscribed, c.unsubscribed), properties = c.properties || i.properties::jsonb,
      updated_at = now()
    from ${input} where c.team_id = ? and lower(c.email) = lower(i.email) returning c.id, lower(c.email) as l`;
  const created = new Map<string, string>();
  const updated = new Map<string, string>();
  if (imp.on_conflict === 'skip') {
    const { rows } = await trx.raw(insert, [imp.team_id, ...bindings]);
    for (const r of rows) created.set(r.l, r.id);
    return { created, updated };
  }
  // One statement: the update reads the snapshot from before the insert, so it touches only rows that existed.
  const { rows } = await trx.raw(
    `with ins as (${insert}), upd as (${update})
    select 'c' as k, id, l from ins union all select 'u' as k, id, l from upd`,
    [imp.team_id, ...bindings, ...bindings, imp.team_id],
  );
  for (const r of rows) (r.k === 'c' ? created : updated).set(r.l, r.id);
  // An address another writer inserted while this statement ran (it waited for that commit, then saw a conflict the
  // snapshot cannot show): updated now, in a statement of its own.
  const late = list.filter((a) => !created.has(a.key) && !updated.has(a.key));
  if (late.length) {
    const lateBindings = (bindings as unknown as unknown[][]).map((b) =>
      late.map((a) => b[list.indexOf(a)]),
    ) as never[];
    const again = await trx.raw(update, [...lateBindings, imp.team_id]);
    for (const r of again.rows) updated.set(r.l, r.id);
  }
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
        written.map((a) => a.contact.unsubscribed !== true) as never,
        imp.topics.map((t) => t.id),
        imp.topics.map((t) => t.subscription),
        imp.team_id,
      ],
    );
  }
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
 * Writes `rows` (consecutive rows of the file) for import `imp`. `included` is the team's allowance (0: none), taken
 * under its lock; `gone` the mapped property keys deleted since the import began.
 */
export async function writeBatch(
  trx: Knex,
  imp: ImportRow,
  rows: BatchRow[],
  included: number,
  gone: Set<string>,
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
  const { created, updated } = await writeContacts(trx, imp, addresses);
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
