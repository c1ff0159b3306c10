// The MX's receive-job enqueue (inbound/mx/enqueue.ts): an idle listener hands a message on at once; ids stored
// while an addBulk is in flight go together in the next one; a failed batch is reported and the next still goes.
import test from 'ava';
import { batchedEnqueue } from '../inbound/mx/enqueue.ts';

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setImmediate(r));

test('one call when idle; calls made while it is in flight coalesce into the next; a failure is reported, not thrown', async (t) => {
  const calls: { ids: string[]; done: ReturnType<typeof deferred> }[] = [];
  const failures: string[][] = [];
  const enqueue = batchedEnqueue(
    async (ids) => {
      const done = deferred();
      calls.push({ ids, done });
      return done.promise;
    },
    (_err, ids) => failures.push(ids),
  );

  enqueue(['a']);
  await tick();
  t.deepEqual(
    calls.map((c) => c.ids),
    [['a']],
    'sent at once',
  );
  enqueue(['b']);
  enqueue(['c', 'd']);
  await tick();
  t.is(calls.length, 1, 'waiting for the batch in flight');
  calls[0].done.reject(new Error('redis down'));
  await tick();
  t.deepEqual(failures, [['a']]);
  t.deepEqual(
    calls.map((c) => c.ids),
    [['a'], ['b', 'c', 'd']],
    'the rest in one batch, after the failure too',
  );
  calls[1].done.resolve();
  await tick();
  enqueue(['e']);
  await tick();
  t.deepEqual(calls[2].ids, ['e']);
});

test('a batch carries at most 500 ids', async (t) => {
  const sizes: number[] = [];
  const enqueue = batchedEnqueue(
    async (ids) => void sizes.push(ids.length),
    () => t.fail(),
  );
  enqueue(Array.from({ length: 1201 }, (_, i) => `m${i}`));
  for (let i = 0; i < 10; i++) await tick();
  t.deepEqual(sizes, [500, 500, 201]);
});
