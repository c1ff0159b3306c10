// The filesystem blob store: a put makes the directories it needs (syncing each new one's parent, so the file is
// reachable after a crash), replaces nothing half-written, and reads back exactly; bad keys are refused.
import test from 'ava';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createFsBlobStore } from '../shared/blobs.ts';

test('put into directories that do not exist yet (the root included) stores the bytes; get, size and delete read them', async (t) => {
  const parent = await mkdtemp(path.join(tmpdir(), 'pw-blobs-'));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  const root = path.join(parent, 'not', 'made', 'yet');
  const blobs = createFsBlobStore(root);
  const bytes = Buffer.from('message bytes\r\n');
  await blobs.put('received/team-a/msg-1/raw.eml', bytes);
  t.true((await stat(path.join(root, 'received', 'team-a', 'msg-1'))).isDirectory());
  t.deepEqual(await blobs.get('received/team-a/msg-1/raw.eml'), bytes);
  t.is(await blobs.size('received/team-a/msg-1/raw.eml'), bytes.length);
  // A second directory under an existing one, and a put into a directory this store already made.
  await blobs.put('received/team-a/msg-2/raw.eml', Buffer.from('two'));
  await blobs.put('received/team-a/msg-2/attachment-0', Buffer.from('three'));
  t.deepEqual(
    (await readdir(path.join(root, 'received', 'team-a', 'msg-2'))).sort(),
    ['attachment-0', 'raw.eml'],
    'no temporary file left',
  );
  await blobs.delete('received/team-a/msg-1/raw.eml');
  t.is(await blobs.get('received/team-a/msg-1/raw.eml'), null);
  t.is(await blobs.size('received/team-a/msg-1/raw.eml'), null);
});

test("a directory removed behind the store's back is made again; keys that climb out are refused", async (t) => {
  const root = await mkdtemp(path.join(tmpdir(), 'pw-blobs-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const blobs = createFsBlobStore(root);
  await blobs.put('emails/t/one', Buffer.from('1'));
  await rm(path.join(root, 'emails'), { recursive: true, force: true });
  await blobs.put('emails/t/two', Buffer.from('2'));
  t.deepEqual(await blobs.get('emails/t/two'), Buffer.from('2'));
  await t.throwsAsync(blobs.put('emails/../../escape', Buffer.from('x')), { message: /bad blob key/ });
  await t.throwsAsync(blobs.put('/abs', Buffer.from('x')), { message: /bad blob key/ });
});
