// shared/queue.ts closeQueues: a worker or queue closed while it is still connecting (a process stopped right after
// its start, as the launcher test does) must not end the process. BullMQ 5 drops such a connection, and the start's
// failure then surfaces as an unhandled rejection (ioredis' "Connection is closed"), which ends a process; ava
// fails a test file that has one.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { closeQueues, createQueue, createWorker, queues } from '../shared/queue.ts';

const config = {
  REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
  REDIS_PREFIX: `pwtest-close-${randomBytes(5).toString('hex')}`,
};

test('workers and queues closed within milliseconds of their creation close cleanly', async (t) => {
  const failures: unknown[] = [];
  const note = (err: unknown) => failures.push(err);
  process.on('unhandledRejection', note);
  process.on('uncaughtException', note);
  t.teardown(() => {
    process.off('unhandledRejection', note);
    process.off('uncaughtException', note);
  });
  // Before the fix, about one in ten of these (closed 0-20 ms after creation) left an unhandled rejection.
  for (let i = 0; i < 60; i++) {
    const worker = createWorker(config, queues.maintenance, async () => undefined);
    const queue = createQueue(config, queues.maintenance);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
    await closeQueues([worker, queue]);
    t.false(worker.isRunning(), `worker ${i} is stopped`);
  }
  // A rejection surfaces a turn or two after the close that caused it.
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.deepEqual(
    failures.map((e) => String(e)),
    [],
  );
});
