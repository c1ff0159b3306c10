import type { Knex } from 'knex';

// The columns that hold message bodies and other large values are compressed with lz4 instead of PostgreSQL's
// default pglz when they are stored out of line or compressed in place (values over ~2 KB). On a 10 KB body of
// ordinary prose pglz costs the server ~200 µs per insert and lz4 ~30 µs, on every send; reading back is cheaper
// too. Only values written from now on use it: a stored value keeps the method it was written with (both stay
// readable), so this changes the catalog and rewrites nothing. A server built without lz4 keeps pglz.
const columns: [string, string[]][] = [
  ['emails', ['text', 'html']],
  ['received_emails', ['text', 'html']],
  ['delivery_attempts', ['transcript']],
  ['request_logs', ['request_body', 'response_body']],
  ['idempotency_keys', ['response_body']],
  ['webhook_deliveries', ['payload']],
];

async function setCompression(knex: Knex, method: 'lz4' | 'pglz'): Promise<void> {
  const statements = columns.map(
    ([table, cols]) =>
      `ALTER TABLE ${table} ${cols.map((c) => `ALTER COLUMN ${c} SET COMPRESSION ${method}`).join(', ')}`,
  );
  await knex.raw(`DO $$ BEGIN
    ${statements.map((s) => `EXECUTE '${s}';`).join('\n    ')}
  EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'compression method % not supported by this server: keeping the default', '${method}';
  END $$`);
}

export async function up(knex: Knex): Promise<void> {
  await setCompression(knex, 'lz4');
}

export async function down(knex: Knex): Promise<void> {
  await setCompression(knex, 'pglz');
}
