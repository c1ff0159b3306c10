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
