// New contacts of an import batch written with COPY (PostgreSQL's bulk path, about twice as fast as a multi-row
// INSERT ... ON CONFLICT into the same table and its indexes). COPY has no ON CONFLICT: it runs in a savepoint, and
// an address that is already a contact (or that another writer inserts meanwhile) stops it on the unique index; the
// savepoint is rolled back and the caller inserts the batch skipping the addresses that exist.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Knex } from 'knex';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { ImportedContact } from './rows.ts';

const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPED: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One field of COPY's text format: `\N` for null, backslash escapes for the characters it gives meaning to. */
export function copyField(value: string | boolean | null): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPED[c]) : value;
}

/** A contact's properties as COPY text: the empty object of most rows without a stringify each. */
const properties = (p: Record<string, unknown>) => {
  for (const _ in p) return copyField(JSON.stringify(p));
  return '{}';
};

/**
 * Copies `contacts` (with `ids`) into contacts on `conn` (the connection of the caller's transaction `trx`). False,
 * with nothing written, when an address is a contact already.
 */
export async function copyContacts(
  trx: Knex,
  conn: pg.ClientBase,
  teamId: string,
  contacts: ImportedContact[],
  ids: string[],
): Promise<boolean> {
  let text = '';
  for (let i = 0; i < contacts.length; i++) {
    const c = contacts[i];
    text += `${ids[i]}\t${teamId}\t${copyField(c.email)}\t${copyField(c.first_name)}\t${copyField(c.last_name)}\t${c.unsubscribed ? 't' : 'f'}\t${c.never_subscribed ? 't' : 'f'}\t${properties(c.properties)}\n`;
  }
  await trx.raw('savepoint import_copy');
  try {
    await pipeline(
      Readable.from([text]),
      conn.query(
        copyFrom(
          'copy contacts (id, team_id, email, first_name, last_name, unsubscribed, never_subscribed, properties) from stdin',
        ),
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
