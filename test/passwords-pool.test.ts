// Argon2 shares libuv's thread pool with the file system: a burst of hashes never leaves a file read waiting behind
// them (shared/accounts/passwords.ts, MAX_CONCURRENT_HASHES), and every hash and check still completes.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { hashPassword, MAX_CONCURRENT_HASHES, verifyPassword } from '../shared/accounts/passwords.ts';

test('a file read during a burst of twelve hashes is answered before the hashes, not after them', async (t) => {
  t.timeout(120_000);
  t.true(MAX_CONCURRENT_HASHES >= 1);
  let hashed = 0;
  const hashes = Array.from({ length: 12 }, (_, i) =>
    hashPassword(`burst password ${i}`).then((hash) => {
      hashed++;
      return hash;
    }),
  );
  // Queued behind all twelve, a read would wait for at least eight of them to finish (four threads, first come first
  // served); with two threads left free it is answered at once.
  await readFile(fileURLToPath(import.meta.url));
  const hashedWhenRead = hashed;
  const done = await Promise.all(hashes);
  t.true(hashedWhenRead <= 1, `${hashedWhenRead} of 12 hashes had finished before the read was answered`);
  t.is(new Set(done).size, 12);
  t.true(await verifyPassword(done[3], 'burst password 3'));
  t.false(await verifyPassword(done[3], 'burst password 4'));
  t.false(await verifyPassword(null, 'anything at all'));
});
