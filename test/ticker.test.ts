// Work on a clock (shared/ticker.ts): runs at the multiples of its period on the wall clock, one at a time (a run
// that overruns skips the instants it missed), sooner when a run asks, on after a failed run (logged), and a stop
// waits for the run in progress and starts no other.
import test from 'ava';
import { createLogger } from '../shared/logger.ts';
import { ticker, untilNextTick } from '../shared/ticker.ts';
import { until } from './helpers/wait.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function logged() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ LOG_LEVEL: 'info' }, 'test', { write: (line: string) => lines.push(JSON.parse(line)) });
  return { log, lines };
}

test('untilNextTick: the time to the next multiple of the period, a whole period on one', (t) => {
  t.is(untilNextTick(500, 10_000), 500);
  t.is(untilNextTick(500, 10_001), 499);
  t.is(untilNextTick(500, 10_499), 1);
  t.is(untilNextTick(2000, 10_500), 1500);
});

test('runs at the multiples of its period, one at a time; an overrun skips the instants it missed', async (t) => {
  const { log } = logged();
  const starts: number[] = [];
  let running = 0;
  let overlapped = false;
  // Long enough that a timer late by up to a third of it, on a busy machine running other test files, still lands in
  // its own period.
  const every = 400;
  const tick = ticker({
    name: 'test',
    everyMs: every,
    log,
    async run() {
      starts.push(Date.now());
      if (++running > 1) overlapped = true;
      // The third run takes a period and a half: the instant in its middle is skipped, not queued.
      await sleep(starts.length === 3 ? every * 1.5 : 5);
      running--;
    },
  });
  tick.start();
  tick.start(); // a second start does nothing
  await until(() => starts.length >= 6, { what: 'six runs', timeoutMs: 10_000 });
  await tick.stop();
  t.false(overlapped, 'never two runs at once');
  // Each run starts at a multiple of the period (a timer fires late, or by Date.now() a millisecond early), so each
  // has a period of its own: the one its start is nearest, one after another but where the overrun skipped one.
  const offsets = starts.map((at) => ((at + 5) % every) - 5);
  t.true(
    offsets.every((ms) => ms < every / 3),
    `runs at ${offsets.join(', ')} ms past a multiple of ${every}`,
  );
  const periods = starts.map((at) => Math.round(at / every));
  const gaps = periods.slice(1).map((p, i) => p - periods[i]);
  t.deepEqual(gaps.slice(0, 4), [1, 1, 2, 1], `periods between runs: ${gaps.join(', ')}`);
});

test('a run may ask for the next sooner; a failed run is logged and the next still runs', async (t) => {
  const { log, lines } = logged();
  const starts: number[] = [];
  const tick = ticker({
    name: 'flaky',
    everyMs: 1000,
    log,
    async run() {
      starts.push(Date.now());
      if (starts.length === 1) throw new Error('the database is away');
      if (starts.length < 4) return { againInMs: 20 };
    },
  });
  tick.start();
  await until(() => starts.length >= 4, { what: 'four runs', timeoutMs: 10_000 });
  await tick.stop();
  // The first run failed, so the second waited for the next whole second; the third and fourth came 20 ms after
  // the run before them.
  t.true(((starts[1] + 5) % 1000) - 5 < 300, `after a failure, the next multiple: ${starts.map((s) => s % 1000)}`);
  // The next multiple would be a second away.
  t.true(starts[2] - starts[1] < 500 && starts[3] - starts[2] < 500, `sooner: ${starts.map((s) => s - starts[0])}`);
  const failed = lines.filter((l) => l.msg === 'ticker.failed');
  t.is(failed.length, 1);
  t.like(failed[0], { ticker: 'flaky', level: 50, err: { message: 'the database is away' } });
});

test('a stop waits for the run in progress and no other starts', async (t) => {
  const { log } = logged();
  let runs = 0;
  let finished = 0;
  const tick = ticker({
    name: 'slow',
    everyMs: 100,
    log,
    async run() {
      runs++;
      await sleep(300);
      finished++;
    },
  });
  tick.start();
  await until(() => runs === 1, { what: 'a run', timeoutMs: 5000 });
  await tick.stop();
  t.is(finished, 1, 'the stop returned after the run in progress ended');
  await sleep(400);
  t.is(runs, 1, 'no run after the stop');
});
