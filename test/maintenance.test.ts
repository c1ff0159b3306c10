import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { runMaintenance } from '../worker/maintenance.ts';
import { newId } from '../shared/ids.ts';
import http from 'node:http';
import { startEntry } from './helpers/processes.ts';
import { freePort } from './helpers/ports.ts';
import { until } from './helpers/wait.ts';
import { importBlobKey } from '../shared/imports/store.ts';
import { v7 } from 'uuid';
import { idBefore } from '../shared/email-metrics/retention.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

// Serial: each counts what one maintenance run removed, and the OAuth test's expired row is any run's to remove.
test.serial(
  'maintenance forgets idempotency keys past 24 h and request logs past 30 days, and keeps the rest',
  async (t) => {
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
      orphan_upload_files: 0,
      email_engagements: 0,
      email_metric_rows: 0,
      oauth_rows: 0,
      contact_peaks_counted: 0,
    });
    t.deepEqual(await p.db('idempotency_keys').where({ team_id: team.id }).pluck('key'), ['fresh']);
    t.deepEqual(await p.db('request_logs').where({ team_id: team.id }).pluck('id'), [newLog]);
  },
);

/** Starts a multipart upload of a CSV to `url` and keeps it open (a file still arriving). */
function openUpload(url: string, key: string) {
  const boundary = 'x-postwerk-boundary';
  const req = http.request(`${url}/contacts/imports`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'user-agent': 'maintenance-test',
      'content-type': `multipart/form-data; boundary=${boundary}`,
    },
  });
  req.on('error', () => {});
  req.write(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="c.csv"\r\n\r\nemail\n`);
  for (let i = 0; i < 2000; i++) req.write(`someone${i}@example.com\n`);
  return req;
}

test('an upload the api was killed in the middle of leaves a file no import names: the maintenance deletes it after a day', async (t) => {
  t.timeout(180_000);
  const team = await p.createTeam('Orphans');
  const port = await freePort();
  const api = startEntry('api/main.ts', p.config, { PORT: String(port), METRICS_API_PORT: '0' });
  t.teardown(() => api.stop());
  await api.logged('api.listening', 120_000);
  const upload = openUpload(`http://127.0.0.1:${port}`, team.key);
  const folder = `imports/${team.id}`;
  const partial = await until(async () => (await p.deps.blobs.list(folder))[0], {
    timeoutMs: 60_000,
    intervalMs: 20,
    what: 'the upload being written',
  });
  process.kill(api.pid, 'SIGKILL');
  await api.exit();
  upload.destroy();
  t.regex(partial.key, /\.csv\.[0-9a-f]+\.tmp$/, 'the unfinished write of the file');

  // A whole file whose import was never committed (killed between the two), and a file an import names.
  const stray = importBlobKey(team.id, newId());
  await p.deps.blobs.put(stray, Buffer.from('email\nx@example.com\n'));
  const namedId = newId();
  const named = importBlobKey(team.id, namedId);
  await p.deps.blobs.put(named, Buffer.from('email\ny@example.com\n'));
  await p.db('contact_imports').insert({
    id: namedId,
    team_id: team.id,
    status: 'completed',
    on_conflict: 'skip',
    blob_key: named,
    file_bytes: 21,
    columns: JSON.stringify(['email']),
    column_map: JSON.stringify({ email: 0, properties: [] }),
    completed_at: new Date(),
  });
  const keys = async () => (await p.deps.blobs.list(folder)).map((b) => b.key).sort();
  t.deepEqual(await keys(), [partial.key, named, stray].sort());

  // Younger than a day: kept (an upload may still be arriving).
  t.is((await runMaintenance(p.db, p.deps.blobs, new Date(Date.now() + 23 * 3600_000))).orphan_upload_files, 0);
  t.is((await keys()).length, 3);
  const later = await runMaintenance(p.db, p.deps.blobs, new Date(Date.now() + 25 * 3600_000));
  t.true(later.orphan_upload_files >= 2);
  t.deepEqual(await keys(), [named], 'only the file an import names is left');
});

test('open and click hits and metrics counters past their retention windows are deleted; younger ones stay', async (t) => {
  const team = await p.createTeam('Retention');
  const now = new Date();
  const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);
  const hit = (at: Date) => ({
    id: v7({ msecs: at.getTime() }),
    team_id: team.id,
    email_id: newId(),
    recipient_id: newId(),
    domain_id: newId(),
    kind: 'open',
    created_at: at,
  });
  const [oldHit, youngHit] = [hit(daysAgo(21)), hit(daysAgo(19))];
  await p.db('email_engagements').insert([oldHit, youngHit]);
  const bucket = (at: Date) => ({ team_id: team.id, bucket: at, domain_id: null, broadcast_id: null, sent: 1 });
  await p.db('email_metric_buckets').insert([bucket(daysAgo(31)), bucket(daysAgo(29))]);
  const perEmail = (at: Date) => ({ email_id: newId(), team_id: team.id, bucket: at, sent: 1 });
  await p.db('email_metric_emails').insert([perEmail(daysAgo(31)), perEmail(daysAgo(29))]);

  const retention = { ENGAGEMENT_RETENTION_DAYS: 20, METRICS_RETENTION_DAYS: 30 };
  const removed = await runMaintenance(p.db, p.deps.blobs, now, retention);
  t.true(removed.email_engagements >= 1);
  t.true(removed.email_metric_rows >= 2);
  t.deepEqual(await p.db('email_engagements').where({ team_id: team.id }).pluck('id'), [youngHit.id]);
  for (const table of ['email_metric_buckets', 'email_metric_emails']) {
    const left = await p.db(table).where({ team_id: team.id }).pluck('bucket');
    t.deepEqual(
      left.map((b: Date) => b.getTime()),
      [daysAgo(29).getTime()],
      table,
    );
  }
  // Again: nothing more goes.
  const again = await runMaintenance(p.db, p.deps.blobs, now, retention);
  t.is(
    await p
      .db('email_engagements')
      .where({ team_id: team.id })
      .count({ n: '*' })
      .first()
      .then((r) => Number(r!.n)),
    1,
  );
  t.is(again.email_metric_rows, 0);
});

test.serial(
  "the OAuth server's rows past their expiry are deleted; live ones and those without an expiry stay",
  async (t) => {
    const now = new Date();
    const row = (id: string, expires_at: Date | null) => ({
      model: 'AccessToken',
      id,
      payload: JSON.stringify({ jti: id }),
      expires_at,
    });
    await p
      .db('oauth_models')
      .insert([
        row('expired', new Date(now.getTime() - 1000)),
        row('live', new Date(now.getTime() + 3600_000)),
        row('forever', null),
      ]);
    const removed = await runMaintenance(p.db, p.deps.blobs, now);
    t.is(removed.oauth_rows, 1);
    t.deepEqual((await p.db('oauth_models').orderBy('id').pluck('id')).sort(), ['forever', 'live']);
  },
);

test('idBefore: the smallest UUID v7 of its millisecond, above every id made before it', (t) => {
  const at = new Date('2026-11-25T12:00:00.000Z');
  t.true(v7({ msecs: at.getTime() - 1 }) < idBefore(at));
  t.true(v7({ msecs: at.getTime() }) >= idBefore(at));
  t.regex(idBefore(at), /^[0-9a-f]{8}-[0-9a-f]{4}-7000-8000-0{12}$/);
});
