// New contacts of an import batch written with COPY (PostgreSQL's bulk path, about twice as fast as a multi-row
// INSERT ... ON CONFLICT into the same table and its indexes). COPY has no ON CONFLICT: it runs in a savepoint, and
// an address that is already a contact (or that another writer inserts meanwhile) stops it on the unique index; the
// savepoint is rolled back and the caller inserts the batch skipping the addresses that exist.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Knex } from 'knex';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPED: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One field of COPY's text format: `\N` for null, backslash escapes for the characters it gives meaning to. */
export function copyField(value: string | boolean | null): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPED[c]) : value;
}

export interface NewContactRow {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: boolean;
  /** JSON text. */
  properties: string;
}

/**
 * Copies `rows` into contacts on `conn` (the connection of the caller's transaction `trx`). False, with nothing
 * written, when an address is a contact already.
 */
export async function copyContacts(trx: Knex, conn: pg.ClientBase, teamId: string, rows: NewContactRow[]) {
  let text = '';
  for (const r of rows)
    text += `${r.id}\t${teamId}\t${copyField(r.email)}\t${copyField(r.first_name)}\t${copyField(r.last_name)}\t${r.unsubscribed ? 't' : 'f'}\t${copyField(r.properties)}\n`;
  await trx.raw('savepoint import_copy');
  try {
    await pipeline(
      Readable.from([text]),
      conn.query(
        copyFrom('copy contacts (id, team_id, email, first_name, last_name, unsubscribed, properties) from stdin'),
      ),
    );
  } catch (err) {
    if ((err as { code?: string }).code !== '23505') throw err;
    await trx.raw('rollback to savepoint import_copy');
    return false;
  }
  await trx.raw('release savepoint import_copy');
  return true;
}
