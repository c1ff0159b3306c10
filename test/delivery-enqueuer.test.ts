// deliveryEnqueuer (shared/emails/enqueue.ts): concurrent enqueues share one addBulk; with a delay (the api's
// wiring) a caller does not wait and its ids reach the queue within the delay, or at flush().
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { newId } from '../shared/ids.ts';
import { deliveryEnqueuer } from '../shared/emails/enqueue.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

test('without a delay each caller resolves once its own jobs are in the queue, concurrent callers together', async (t) => {
  const enqueue = deliveryEnqueuer(p.deliverQueue, p.deps.log);
  const ids = Array.from({ length: 5 }, () => newId());
  await Promise.all([enqueue([ids[0]]), enqueue([ids[1], ids[2]]), enqueue([]), enqueue([ids[3]]), enqueue([ids[4]])]);
  for (const id of ids) t.like(await p.deliverQueue.getJob(id), { id, data: { emailId: id } });
});

test('with a delay the caller does not wait; the jobs arrive within the delay, and flush() hands over the rest', async (t) => {
  const enqueue = deliveryEnqueuer(p.deliverQueue, p.deps.log, { delayMs: 500 });
  const first = newId();
  await enqueue([first]);
  t.is(await p.deliverQueue.getJob(first), undefined);
  t.truthy(
    await until(() => p.deliverQueue.getJob(first), { what: 'the delayed job', timeoutMs: 5000, intervalMs: 10 }),
  );

  const slow = deliveryEnqueuer(p.deliverQueue, p.deps.log, { delayMs: 60_000 });
  const later = [newId(), newId()];
  await slow([later[0]]);
  await slow([later[1]]);
  await slow.flush();
  for (const id of later) t.truthy(await p.deliverQueue.getJob(id));
});

test('with a delay, sends handed over while a pipeline is in flight wait for company too, then go together', async (t) => {
  // Every addBulk the queue makes, with when it started.
  const bulks: { at: number; n: number }[] = [];
  const queue = Object.create(p.deliverQueue) as typeof p.deliverQueue;
  queue.addBulk = async (jobs) => {
    bulks.push({ at: performance.now(), n: jobs.length });
    return p.deliverQueue.addBulk(jobs);
  };
  const enqueue = deliveryEnqueuer(queue, p.deps.log, { delayMs: 100 });
  const ids = Array.from({ length: 30 }, () => newId());
  // A send every 5 ms or so for 150 ms: the first batch leaves at 100 ms, the rest 100 ms after it returned.
  for (const id of ids) {
    await enqueue([id]);
    await new Promise((r) => setTimeout(r, 5));
  }
  await until(async () => (await Promise.all(ids.map((id) => p.deliverQueue.getJob(id)))).every(Boolean), {
    what: 'every job',
    timeoutMs: 5000,
  });
  // Two on time (a slow machine stretches the sends' 5 ms, so maybe more), each 100 ms after the one before.
  t.true(bulks.length >= 2 && bulks.length <= 5, JSON.stringify(bulks));
  t.is(
    bulks.reduce((sum, b) => sum + b.n, 0),
    30,
  );
  for (let i = 1; i < bulks.length; i++)
    t.true(bulks[i].at - bulks[i - 1].at >= 99, `${bulks[i].at - bulks[i - 1].at} ms apart`);
});
