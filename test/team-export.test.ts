// Team export: an admin asks, the worker's export run builds a zip (a JSON file per table of the team, secrets left
// out, manifest.json), a signed download link for the admin signed in, truncation at the size and time ceilings, a
// build that fails (`failed`), expiry after 7 days by the retention job.
import test from 'ava';
import yauzl from 'yauzl';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { makeUser, signIn, type CookieClient } from './helpers/accounts.ts';
import { buildExport, buildPendingExports, type ExportDeps } from '../shared/teams/export.ts';
import { createFsBlobStore } from '../shared/blobs.ts';
import { createLogger } from '../shared/logger.ts';
import { runRetention } from '../worker/retention.ts';
import { startEntry } from './helpers/processes.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

async function unzip(data: Buffer): Promise<Map<string, Buffer>> {
  const zip = await yauzl.fromBufferPromise(data, { lazyEntries: true });
  const files = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', async (entry: yauzl.Entry) => {
      const stream = await zip.openReadStreamPromise(entry);
      const chunks: Buffer[] = [];
      for await (const c of stream) chunks.push(c as Buffer);
      files.set(entry.fileName, Buffer.concat(chunks));
      zip.readEntry();
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  return files;
}

let n = 0;
async function adminWithTeam(): Promise<{ c: CookieClient; teamId: string; key: string }> {
  const email = `exporter${++n}-${Date.now()}@people.test`;
  await makeUser(p.db, email);
  const c = await signIn(p.url, email);
  const team = await c.request('POST', '/teams', { body: { name: `Export ${n}`, api_key: true } });
  return { c, teamId: team.body.id, key: team.body.api_key.token };
}

const worker = () => buildPendingExports({ db: p.db, blobs: p.deps.blobs, config: p.config, log: p.deps.log });

/**
 * Builds one export by its id, with the deps changed as given. The tests that use it run serially, so no other
 * test's export run (which builds every pending export) takes their export first with the usual ceilings.
 */
const buildOne = (
  id: string,
  change: Partial<Omit<ExportDeps, 'config'>> & { config?: Partial<ExportDeps['config']> } = {},
) =>
  buildExport(
    {
      db: p.db,
      blobs: change.blobs ?? p.deps.blobs,
      log: change.log ?? p.deps.log,
      config: { ...p.config, ...change.config },
    },
    id,
  );

/** The files of a completed export's archive, downloaded by its link with the admin's session. */
async function download(c: CookieClient, exported: { download_url: string }): Promise<Map<string, Buffer>> {
  const file = await fetch(p.url + exported.download_url.slice(p.config.PUBLIC_BASE_URL.length), {
    headers: { 'user-agent': 'test', cookie: c.cookieHeader() },
  });
  if (file.status !== 200) throw new Error(`download answered ${file.status}`);
  return unzip(Buffer.from(await file.arrayBuffer()));
}

test('an admin exports the team: pending, built by the worker, a zip of JSON per table with secrets left out', async (t) => {
  const { c, teamId, key } = await adminWithTeam();
  await p.request('POST', '/suppressions', { key, body: { email: 'gone@example.com' } });
  await p.request('POST', '/contacts', { key, body: { email: 'reader@example.com', first_name: 'Rea' } });
  await p.request('POST', '/webhooks', { key, body: { endpoint: 'https://example.com/hook', events: ['email.sent'] } });
  const asked = await c.request('POST', `/teams/${teamId}/exports`, { body: {} });
  t.is(asked.status, 201, asked.text);
  t.like(asked.body, { object: 'team_export', status: 'pending', download_url: null, bytes: null, truncated: false });
  t.true((await worker()) >= 1);
  const done = await c.request('GET', `/teams/${teamId}/exports/${asked.body.id}`);
  t.like(done.body, { status: 'completed', truncated: false });
  t.true(done.body.bytes > 0);
  t.truthy(done.body.expires_at);
  t.regex(
    done.body.download_url,
    new RegExp(`/teams/${teamId}/exports/${asked.body.id}/download\\?expires=\\d+&token=`),
  );
  // Links name PUBLIC_BASE_URL (port 0 here): the path is what the test server answers.
  const path = done.body.download_url.slice(p.config.PUBLIC_BASE_URL.length);
  const file = await fetch(p.url + path, { headers: { 'user-agent': 'test', cookie: c.cookieHeader() } });
  t.is(file.status, 200);
  t.is(file.headers.get('content-type'), 'application/zip');
  t.regex(file.headers.get('content-disposition') ?? '', /^attachment; filename="postwerk-export-/);
  const files = await unzip(Buffer.from(await file.arrayBuffer()));
  const manifest = JSON.parse(files.get('manifest.json')!.toString());
  t.is(manifest.team_id, teamId);
  t.false(manifest.truncated);
  for (const name of [
    'team.json',
    'suppressions.json',
    'contacts.json',
    'webhook_endpoints.json',
    'api_keys.json',
    'team_members.json',
  ])
    t.true(files.has(name), name);
  t.is(JSON.parse(files.get('suppressions.json')!.toString())[0].email, 'gone@example.com');
  t.is(JSON.parse(files.get('contacts.json')!.toString())[0].first_name, 'Rea');
  const keys = JSON.parse(files.get('api_keys.json')!.toString());
  t.is(keys.length, 1);
  t.false('token_hash' in keys[0], 'no key hash in the archive');
  t.false(files.get('webhook_endpoints.json')!.toString().includes('whsec_'), 'no signing secret');
  t.true(manifest.left_out.some((l: { what: string }) => l.what === 'api_keys.token_hash'));
  t.true(manifest.left_out.some((l: { what: string }) => l.what === 'blob store'));
  // The link alone is not enough: without the admin's session the route answers 401; a bad token 404.
  t.is((await fetch(p.url + path, { headers: { 'user-agent': 'test' } })).status, 401);
  const forged = await fetch(p.url + path.replace(/token=[^&]+/, `token=${'A'.repeat(43)}`), {
    headers: { 'user-agent': 'test', cookie: c.cookieHeader() },
  });
  t.is(forged.status, 404);
});

test('viewers and members cannot export; another team id is 404', async (t) => {
  const { c, teamId } = await adminWithTeam();
  const email = `viewer${++n}-${Date.now()}@people.test`;
  const user = await makeUser(p.db, email);
  await p.db('team_members').insert({ id: crypto.randomUUID(), team_id: teamId, user_id: user.id, role: 'member' });
  const member = await signIn(p.url, email);
  const refused = await member.request('POST', `/teams/${teamId}/exports`, { body: {} });
  t.is(refused.status, 403);
  t.is(Number((await p.db('team_exports').where({ team_id: teamId }).count({ n: '*' }))[0].n), 0);
  const other = await adminWithTeam();
  t.is((await other.c.request('POST', `/teams/${teamId}/exports`, { body: {} })).status, 404);
  t.is((await c.request('GET', `/teams/${teamId}/exports`)).status, 200);
});

test.serial(
  'the size ceiling truncates the archive and the manifest names what was left out; expired after 7 days',
  async (t) => {
    const { c, teamId, key } = await adminWithTeam();
    for (let i = 0; i < 30; i++) await p.request('POST', '/contacts', { key, body: { email: `c${i}@example.com` } });
    const asked = await c.request('POST', `/teams/${teamId}/exports`, { body: {} });
    await buildOne(asked.body.id, { config: { TEAM_EXPORT_MAX_BYTES: 1024 } });
    const done = await c.request('GET', `/teams/${teamId}/exports/${asked.body.id}`);
    t.like(done.body, { status: 'completed', truncated: true });
    const manifest = JSON.parse((await download(c, done.body)).get('manifest.json')!.toString());
    t.true(manifest.truncated);
    t.true(
      manifest.left_out.some((l: { reason: string }) => /size ceiling/.test(l.reason)),
      JSON.stringify(manifest.left_out),
    );
    const row = await p.db('team_exports').where({ id: asked.body.id }).first();
    const eightDays = new Date(Date.now() + 8 * 86_400_000);
    await runRetention({ db: p.db, blobs: p.deps.blobs, redis: p.redis, config: p.config, log: p.deps.log }, eightDays);
    const expired = await c.request('GET', `/teams/${teamId}/exports/${asked.body.id}`);
    t.like(expired.body, { status: 'expired', download_url: null });
    t.is(await p.deps.blobs.get(row.blob_key), null, 'the archive is deleted');
  },
);

test.serial('the time ceiling truncates the archive: each table past it is named with its rows left out', async (t) => {
  const { c, teamId, key } = await adminWithTeam();
  for (let i = 0; i < 3; i++) await p.request('POST', '/contacts', { key, body: { email: `t${i}@example.com` } });
  const asked = await c.request('POST', `/teams/${teamId}/exports`, { body: {} });
  // A ceiling of 0 seconds is reached before any table's first rows are read.
  await buildOne(asked.body.id, { config: { TEAM_EXPORT_MAX_SECONDS: 0 } });
  const done = await c.request('GET', `/teams/${teamId}/exports/${asked.body.id}`);
  t.like(done.body, { status: 'completed', truncated: true });
  const files = await download(c, done.body);
  const manifest = JSON.parse(files.get('manifest.json')!.toString());
  t.true(manifest.truncated);
  t.true(
    manifest.left_out.some(
      (l: { what: string; reason: string }) => l.what === 'contacts: 3 rows' && /time ceiling/.test(l.reason),
    ),
    JSON.stringify(manifest.left_out),
  );
  t.deepEqual(JSON.parse(files.get('contacts.json')!.toString()), []);
  t.like(
    manifest.files.find((f: { table: string }) => f.table === 'contacts'),
    { rows: 0 },
  );
  t.is(JSON.parse(files.get('team.json')!.toString()).id, teamId, 'the team itself is always in the archive');
});

test.serial('a build that fails is `failed`: no link, no archive, logged, and not built again', async (t) => {
  const { c, teamId } = await adminWithTeam();
  const asked = await c.request('POST', `/teams/${teamId}/exports`, { body: {} });
  // A blob store whose directory is a regular file: the archive's write fails (ENOTDIR), as a broken disk's would.
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-export-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const notADirectory = path.join(dir, 'file');
  await writeFile(notADirectory, '');
  const lines: string[] = [];
  const log = createLogger({ LOG_LEVEL: 'info' }, 'worker', { write: (line: string) => void lines.push(line) });
  t.is(await buildOne(asked.body.id, { blobs: createFsBlobStore(notADirectory), log }), null);
  const failed = await c.request('GET', `/teams/${teamId}/exports/${asked.body.id}`);
  t.is(failed.status, 200, failed.text);
  t.like(failed.body, { status: 'failed', download_url: null, bytes: null, expires_at: null });
  t.truthy(failed.body.completed_at);
  const row = await p.db('team_exports').where({ id: asked.body.id }).first();
  t.like(row, { error: 'the archive could not be built', blob_key: null });
  t.truthy(row.started_at, 'it was running before it failed');
  t.true(
    lines.some((l) => JSON.parse(l).msg === 'team_export.failed'),
    lines.join(''),
  );
  // A later run with a store that works leaves it failed: the admin asks again.
  t.is(await buildOne(asked.body.id), null);
  t.is((await p.db('team_exports').where({ id: asked.body.id }).first()).status, 'failed');
  const listed = await c.request('GET', `/teams/${teamId}/exports`);
  t.is(listed.body.data.find((e: { id: string }) => e.id === asked.body.id).status, 'failed');
});

// Serial: ava runs it (and stops the worker) before the others, whose exports the in-process run builds.
test.serial('the real worker process builds an export asked for through the api', async (t) => {
  t.timeout(180_000);
  const { c, teamId } = await adminWithTeam();
  const worker = startEntry('worker/main.ts', p.config);
  t.teardown(() => worker.stop());
  await worker.logged('worker.started', 150_000);
  const asked = await c.request('POST', `/teams/${teamId}/exports`, { body: {} });
  const done = await until(
    async () => {
      const res = await c.request('GET', `/teams/${teamId}/exports/${asked.body.id}`);
      return res.body.status === 'completed' && res.body;
    },
    { timeoutMs: 60_000, what: 'the worker to complete the export' },
  );
  t.true(done.bytes > 0);
  t.truthy(done.download_url);
});
