import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { runMaintenance } from '../worker/maintenance.ts';
import { newId } from '../shared/ids.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

test('maintenance forgets idempotency keys past 24 h and request logs past 30 days, and keeps the rest', async (t) => {
  const team = await p.createTeam();
  const now = new Date();
  const hoursAgo = (h: number) => new Date(now.getTime() - h * 3600_000);
  await p.db('idempotency_keys').insert([
    { team_id: team.id, key: 'old', request_hash: 'x', status: 'done', created_at: hoursAgo(25) },
    { team_id: team.id, key: 'fresh', request_hash: 'x', status: 'done', created_at: hoursAgo(23) },
  ]);
  const log = (id: string, created_at: Date) => ({
    id,
    team_id: team.id,
    method: 'GET',
    endpoint: '/team',
    response_status: 200,
    duration_ms: 1,
    created_at,
  });
  const oldLog = newId();
  const newLog = newId();
  await p.db('request_logs').insert([log(oldLog, hoursAgo(31 * 24)), log(newLog, hoursAgo(29 * 24))]);

  const removed = await runMaintenance(p.db, p.deps.blobs, now);
  t.deepEqual(removed, {
    idempotency_keys: 1,
    request_logs: 1,
    dropped_received: 0,
    contact_import_files: 0,
    contact_peaks_counted: 0,
  });
  t.deepEqual(await p.db('idempotency_keys').where({ team_id: team.id }).pluck('key'), ['fresh']);
  t.deepEqual(await p.db('request_logs').where({ team_id: team.id }).pluck('id'), [newLog]);
});
