// The MX's receive-job enqueue (inbound/mx/enqueue.ts): an idle listener hands a message on at once, or after its
// delay with whatever came meanwhile; ids stored while an addBulk is in flight go together in the next one; a failed
// batch is reported and the next still goes.
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

test('with a delay, the ids of the delay go in one batch, and those stored while it is in flight in the next', async (t) => {
  const calls: { ids: string[]; at: number; done: ReturnType<typeof deferred> }[] = [];
  const enqueue = batchedEnqueue(
    async (ids) => {
      const done = deferred();
      calls.push({ ids, at: performance.now(), done });
      return done.promise;
    },
    () => t.fail(),
    { delayMs: 30 },
  );
  const start = performance.now();
  enqueue(['a']);
  await tick();
  t.is(calls.length, 0, 'waiting for company');
  enqueue(['b']);
  await new Promise((r) => setTimeout(r, 10));
  enqueue(['c']);
  await new Promise((r) => setTimeout(r, 40));
  t.deepEqual(
    calls.map((c) => c.ids),
    [['a', 'b', 'c']],
  );
  t.true(calls[0].at - start >= 29, `sent after ${calls[0].at - start} ms`);
  enqueue(['d']);
  await new Promise((r) => setTimeout(r, 40));
  t.is(calls.length, 1, 'in flight: the next waits for it');
  calls[0].done.resolve();
  await tick();
  enqueue(['e']);
  t.is(calls.length, 1, 'the next batch waits for company too');
  const returned = performance.now();
  await new Promise((r) => setTimeout(r, 40));
  t.deepEqual(calls[1].ids, ['d', 'e']);
  t.true(calls[1].at - returned >= 29, `sent ${calls[1].at - returned} ms after the batch before returned`);
  calls[1].done.resolve();
});
