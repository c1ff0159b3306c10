// The batching request-log writer (shared/logs/writer.ts) as api/main.ts wires it: a request does not wait for
// its row; rows go out in one statement per delay (or per maxRows), on flush() and on close().
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { newId } from '../shared/ids.ts';
import { requestLogWriter } from '../shared/logs/writer.ts';
import type { NewRequestLog } from '../shared/logs/logs.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

const row = (teamId: string, keyId: string | null, extra: Partial<NewRequestLog> = {}): NewRequestLog => ({
  id: newId(),
  team_id: teamId,
  api_key_id: keyId,
  method: 'POST',
  endpoint: '/emails',
  response_status: 200,
  user_agent: 'writer-test',
  duration_ms: 3,
  request_body: { subject: 'hi', password: 'pw' },
  response_body: { id: 'x' },
  ...extra,
});

const count = async (teamId: string) =>
  Number((await p.db('request_logs').where({ team_id: teamId }).count<{ n: string }[]>('* as n'))[0].n);

test('with a delay, rows are written together by the timer, by maxRows, by flush() and by close()', async (t) => {
  const team = await p.createTeam();
  const writer = requestLogWriter(p.db, p.deps.log, { delayMs: 100_000, maxRows: 10 });
  for (let i = 0; i < 3; i++) await writer.record(row(team.id, null));
  t.is(await count(team.id), 0, 'a request does not wait for its row');
  await writer.flush();
  t.is(await count(team.id), 3);
  for (let i = 0; i < 10; i++) await writer.record(row(team.id, null));
  // maxRows reached: written without waiting for the (long) delay.
  await until(async () => (await count(team.id)) >= 13, { what: '13 rows', timeoutMs: 5000 });
  t.is(await count(team.id), 13);
  await writer.record(row(team.id, null));
  await writer.close();
  t.is(await count(team.id), 14);

  const timed = requestLogWriter(p.db, p.deps.log, { delayMs: 30 });
  await timed.record(row(team.id, null));
  await until(async () => (await count(team.id)) >= 15, { what: '15 rows', timeoutMs: 5000 });
  t.is(await count(team.id), 15);
  await timed.close();
});

test('a batch stores redacted bodies and touches each key once, with its newest log', async (t) => {
  const team = await p.createTeam();
  const key = await p.db('api_keys').where({ team_id: team.id }).first('id');
  const writer = requestLogWriter(p.db, p.deps.log, { delayMs: 100_000 });
  const rows = [
    row(team.id, key.id),
    row(team.id, key.id, { request_body: undefined, response_body: 'a'.repeat(5000) }),
  ];
  for (const r of rows) await writer.record(r);
  await writer.close();
  const stored = await p.db('request_logs').where({ team_id: team.id }).orderBy('id');
  t.deepEqual(
    stored.map((s) => s.id),
    rows.map((r) => r.id),
  );
  t.deepEqual(stored[0].request_body, { subject: 'hi', password: '[redacted]' });
  t.is(stored[1].request_body, null);
  t.true(String(stored[1].response_body).startsWith('a'.repeat(2048)));
  t.true(stored[0].created_at instanceof Date);
  const touched = await p.db('api_keys').where({ id: key.id }).first();
  t.is(touched.last_used_request_log_id, rows[1].id);
  t.truthy(touched.last_used_at);
});
