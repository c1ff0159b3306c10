// The dashboard's API types (web/src/api/schema.d.ts, checked in) are what `npm run openapi:types` makes from the
// OpenAPI document the api serves now: a route or schema change without regenerating them fails here.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { dashboardTypes, SCHEMA_FILE } from '../web/generate-types.ts';

test('web/src/api/schema.d.ts is current (npm run openapi:types)', async (t) => {
  t.timeout(60_000);
  const checkedIn = await readFile(SCHEMA_FILE, 'utf8');
  t.true(checkedIn === (await dashboardTypes()), 'stale: run `npm run openapi:types` and commit the file');
});
