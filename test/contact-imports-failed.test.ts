// An import that fails as a whole, and the import's first states, driven by the worker's own run function
// (shared/imports/run.ts, what worker/contacts.ts calls) so that the file can be taken away or spoilt between the
// upload and the run: no worker process runs here to race for it.
import test from 'ava';
import pino from 'pino';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startImport } from './helpers/imports.ts';
import { runImport } from '../shared/imports/run.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

const run = (id: string) =>
  runImport({ db: p.db, blobs: p.deps.blobs, log: pino({ level: 'silent' }), batchRows: 2 }, id);
const get = (key: string, path: string) => p.request('GET', path, { key });

test('queued until a worker takes it; listed by status', async (t) => {
  const team = await p.createTeam('Queued');
  const id = await startImport(p, team, 'email\na@example.com\n');
  t.like((await get(team.key, `/contacts/imports/${id}`)).body, {
    status: 'queued',
    completed_at: null,
    counts: { total: 1, created: 0, updated: 0, skipped: 0, failed: 0 },
  });
  t.deepEqual(
    (await get(team.key, '/contacts/imports?status=queued')).body.data.map((i: { id: string }) => i.id),
    [id],
  );
  t.is(await run(id), 'completed');
  t.is(await run(id), 'finished already', 'a second run of a finished import does nothing');
  t.like((await get(team.key, `/contacts/imports/${id}`)).body, { status: 'completed', counts: { created: 1 } });
  t.deepEqual((await get(team.key, '/contacts/imports?status=queued')).body.data, []);
});

test('a file spoilt after the upload: the import fails at the row it could not read; the rows before stay', async (t) => {
  const team = await p.createTeam('Spoilt');
  const id = await startImport(p, team, 'email\na@example.com\nb@example.com\nc@example.com\nd@example.com\n');
  const row = await p.db('contact_imports').where({ id }).first();
  // The api checked the file it took; a file changed behind its back is what the worker's own check is for.
  await p.deps.blobs.put(
    row.blob_key,
    Buffer.from('email\na@example.com\nb@example.com\n"c@example.com\nd@example.com\n'),
  );
  t.is(await run(id), 'failed');
  const failed = (await get(team.key, `/contacts/imports/${id}`)).body;
  t.like(failed, { status: 'failed', counts: { created: 2, failed: 0 } });
  t.truthy(failed.completed_at);
  const failures = (await get(team.key, `/contacts/imports/${id}/failures`)).body;
  t.like(failures, { status: 'failed', data: [] });
  t.regex(failures.error, /could not be read after row 3.*Quote Not Closed/);
  t.is(
    await p
      .db('contacts')
      .where({ team_id: team.id })
      .count({ n: '*' })
      .first()
      .then((r) => Number(r!.n)),
    2,
  );
  const audit = await p.db('audit_log').where({ team_id: team.id });
  t.is(audit.length, 1);
  t.like(audit[0].data, { status: 'failed', counts: { created: 2 } });
});

test('a file gone before the run: the import fails saying so', async (t) => {
  const team = await p.createTeam('Gone');
  const id = await startImport(p, team, 'email\na@example.com\n');
  const row = await p.db('contact_imports').where({ id }).first();
  await p.deps.blobs.delete(row.blob_key);
  t.is(await run(id), 'failed');
  const failures = (await get(team.key, `/contacts/imports/${id}/failures`)).body;
  t.like(failures, { status: 'failed', error: 'the uploaded file is no longer stored' });
});
