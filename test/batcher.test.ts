// The hand-over in batches (shared/batcher.ts) of the MX's receive jobs and the deliver jobs: an idle batcher sends
// at once, or after its delay with whatever came meanwhile; items handed over while a batch is in flight go together
// in the next one; a failed batch is reported and the next still goes; a caller's items too many for one batch are
// split, and the caller resolves once the last of them is sent.
import test from 'ava';
import { batcher } from '../shared/batcher.ts';
import { until } from './helpers/wait.ts';

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
  const enqueue = batcher(
    async (ids: string[]) => {
      const done = deferred();
      calls.push({ ids, done });
      return done.promise;
    },
    { max: 500, onError: (_err, ids) => failures.push(ids) },
  );

  void enqueue(['a']);
  await tick();
  t.deepEqual(
    calls.map((c) => c.ids),
    [['a']],
    'sent at once',
  );
  void enqueue(['b']);
  void enqueue(['c', 'd']);
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
  void enqueue(['e']);
  await tick();
  t.deepEqual(calls[2].ids, ['e']);
});

test('a batch carries at most `max` items; a caller resolves once the last batch with its items is sent', async (t) => {
  const sent: string[][] = [];
  const enqueue = batcher(async (ids: string[]) => void sent.push(ids), { max: 500, onError: () => t.fail() });
  const resolved: string[] = [];
  const big = enqueue(Array.from({ length: 1201 }, (_, i) => `m${i}`)).then(() => resolved.push('big'));
  const small = enqueue(['x', 'y']).then(() => resolved.push('small'));
  await Promise.all([big, small]);
  t.deepEqual(
    sent.map((b) => b.length),
    [500, 500, 203],
  );
  t.deepEqual(sent.flat(), [...Array.from({ length: 1201 }, (_, i) => `m${i}`), 'x', 'y'], 'in order, none twice');
  t.deepEqual(resolved, ['big', 'small'], 'both resolved with the last batch, in order');
});

test('a caller whose batch fails resolves too; flush() sends what waits at once, without the delay', async (t) => {
  const failed: string[][] = [];
  let sends = 0;
  const slow = batcher(
    async (ids: string[]) => {
      sends++;
      if (ids.includes('bad')) throw new Error('redis down');
    },
    { max: 10, delayMs: 60_000, onError: (_err, ids) => failed.push(ids) },
  );
  const handed = slow(['bad', 'ok']);
  t.is(sends, 0, 'waiting for company');
  await slow.flush();
  await handed;
  t.is(sends, 1);
  t.deepEqual(failed, [['bad', 'ok']]);
  await slow.flush();
  t.is(sends, 1, 'nothing left to send');
});

test('with a delay, the ids of the delay go in one batch, and those stored while it is in flight in the next', async (t) => {
  const calls: { ids: string[]; at: number; done: ReturnType<typeof deferred> }[] = [];
  // 300 ms of delay, so that a loaded machine's pauses (a CI run once held this test's loop ~25 ms) cannot reorder
  // the steps below; each wait for a batch polls instead of sleeping a fixed time.
  const DELAY = 300;
  const enqueue = batcher(
    async (ids: string[]) => {
      const done = deferred();
      calls.push({ ids, at: performance.now(), done });
      return done.promise;
    },
    { max: 500, delayMs: DELAY, onError: () => t.fail() },
  );
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const batches = (n: number) => until(() => calls.length >= n, { what: `batch ${n}`, timeoutMs: 5000, intervalMs: 5 });
  const start = performance.now();
  void enqueue(['a']);
  await tick();
  t.is(calls.length, 0, 'waiting for company');
  void enqueue(['b']);
  await sleep(50);
  void enqueue(['c']);
  await batches(1);
  t.deepEqual(
    calls.map((c) => c.ids),
    [['a', 'b', 'c']],
  );
  t.true(calls[0].at - start >= DELAY - 1, `sent after ${calls[0].at - start} ms`);
  void enqueue(['d']);
  await sleep(DELAY + 50);
  t.is(calls.length, 1, 'in flight: the next waits for it');
  // Taken before the batch returns: the next one's delay counts from its return, so at least DELAY after this.
  const returned = performance.now();
  calls[0].done.resolve();
  await tick();
  void enqueue(['e']);
  t.is(calls.length, 1, 'the next batch waits for company too');
  await batches(2);
  t.deepEqual(calls[1].ids, ['d', 'e']);
  t.true(calls[1].at - returned >= DELAY - 1, `sent ${calls[1].at - returned} ms after the batch before returned`);
  calls[1].done.resolve();
});
