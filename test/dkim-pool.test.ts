// The DKIM key pool's refill (the worker's `dkim-pool` job): it tops the pool up to its target, each key sealed at
// rest, and a stopping worker's aborted signal ends it between keys instead of after all of them.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { fillPool } from '../shared/domains/dkim.ts';
import { secretsKey } from '../shared/secrets.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

const pooled = async () => Number((await p.db('dkim_key_pool').count({ n: '*' }).first())?.n);

test.serial('the refill tops up to its target; an aborted signal stops it between keys', async (t) => {
  const secrets = secretsKey(p.config);
  const before = await pooled();
  t.is(await fillPool(p.db, secrets, before + 2), 2);
  t.is(await pooled(), before + 2);
  t.is(await fillPool(p.db, secrets, before + 2), 0, 'a full pool adds nothing');
  const rows = await p.db('dkim_key_pool').select('private_key_sealed');
  t.true(
    rows.every((r) => !r.private_key_sealed.includes('PRIVATE KEY')),
    'sealed at rest',
  );

  const stop = new AbortController();
  stop.abort();
  t.is(await fillPool(p.db, secrets, before + 5, stop.signal), 0, 'aborted before the first key');
  const midway = new AbortController();
  const filling = fillPool(p.db, secrets, before + 50, midway.signal);
  await new Promise((resolve) => setTimeout(resolve, 50));
  midway.abort();
  const added = await filling;
  t.true(added >= 0 && added < 48, `stopped between keys after ${added}`);
  t.is(await pooled(), before + 2 + added);
});
