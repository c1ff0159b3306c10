// Pure parts of delivery: the retry schedule, the return-path and unsubscribe tokens,
// header fixes of a submitted message, the per-destination throttle.
import test from 'ava';
import { decideDeferral, GIVE_UP_AFTER_MS, retryDelayMs } from '../mta/delivery/schedule.ts';
import { finishHeaders } from '../mta/delivery/compose.ts';
import { createThrottle } from '../mta/delivery/throttle.ts';
import { createByteBudget } from '../mta/delivery/memory.ts';
import {
  readReturnPathAddress,
  readUnsubscribeToken,
  returnPathAddress,
  unsubscribeToken,
} from '../shared/emails/mail-tokens.ts';

const MIN = 60_000;

test('retry delays: 1 m, 5 m, 15 m, 30 m, 1 h, 2 h, then every 4 h', (t) => {
  t.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 20].map((n) => retryDelayMs(n) / MIN),
    [1, 5, 15, 30, 60, 120, 240, 240],
  );
});

test('a deferral: next attempt, delay notice once past 15 minutes, expiry at 72 hours', (t) => {
  const t0 = new Date('2026-11-22T10:00:00Z');
  const first = decideDeferral({ attempts: 0, first_deferred_at: null, delay_notified: false }, t0);
  t.deepEqual(first, {
    expired: false,
    next_attempt_at: new Date(t0.getTime() + MIN),
    first_deferred_at: t0,
    notify: false,
  });
  const at21 = decideDeferral(
    { attempts: 3, first_deferred_at: t0, delay_notified: false },
    new Date(t0.getTime() + 21 * MIN),
  );
  t.like(at21, { expired: false, notify: true });
  const notified = decideDeferral(
    { attempts: 4, first_deferred_at: t0, delay_notified: true },
    new Date(t0.getTime() + 51 * MIN),
  );
  t.like(notified, { notify: false });
  const late = decideDeferral(
    { attempts: 20, first_deferred_at: t0, delay_notified: true },
    new Date(t0.getTime() + GIVE_UP_AFTER_MS - MIN),
  );
  t.like(late, { expired: false, next_attempt_at: new Date(t0.getTime() + GIVE_UP_AFTER_MS) });
  t.like(
    decideDeferral(
      { attempts: 21, first_deferred_at: t0, delay_notified: true },
      new Date(t0.getTime() + GIVE_UP_AFTER_MS),
    ),
    { expired: true },
  );
});

test('return-path tokens name their email and refuse forgeries; unsubscribe tokens likewise', (t) => {
  const key = Buffer.alloc(32, 7);
  const id = '01930f2e-8b1c-7aaa-9bbb-0123456789ab';
  const address = returnPathAddress(key, id, 'send', 'example.com');
  t.regex(address, /^bounces\+[a-z2-7]{39}@send\.example\.com$/);
  t.true(address.split('@')[0].length <= 64);
  t.is(readReturnPathAddress(key, address), id);
  t.is(readReturnPathAddress(key, address.toUpperCase()), id, 'case-insensitive, as some MTAs rewrite local parts');
  t.is(readReturnPathAddress(Buffer.alloc(32, 8), address), null, 'another key: not ours');
  const forged = address.replace(/\+(.)/, (_, c: string) => `+${c === 'a' ? 'b' : 'a'}`);
  t.is(readReturnPathAddress(key, forged), null);
  t.is(readReturnPathAddress(key, 'someone@example.com'), null);
  const token = unsubscribeToken(key, id);
  t.is(readUnsubscribeToken(key, token), id);
  t.is(readUnsubscribeToken(Buffer.alloc(32, 9), token), null);
});

test('finishHeaders: adds Message-ID and Date when missing, drops Bcc and Return-Path, keeps the body', (t) => {
  const email = { message_id: '<x@example.com>', created_at: new Date('2026-11-22T10:00:00Z') };
  const raw = Buffer.from(
    'Return-Path: <a@b.c>\r\nFrom: a@b.c\r\nBcc: x@y.z,\r\n  w@y.z\r\nSubject: s\r\n\r\nBcc: in the body stays\r\n',
  );
  const out = finishHeaders(raw, email).toString();
  t.is(
    out,
    'Message-ID: <x@example.com>\r\nDate: Sun, 22 Nov 2026 10:00:00 +0000\r\nFrom: a@b.c\r\nSubject: s\r\n\r\nBcc: in the body stays\r\n',
  );
  const complete = Buffer.from('Message-ID: <y@b.c>\r\nDate: Sun, 22 Nov 2026 10:00:00 +0000\r\n\r\nbody');
  t.is(finishHeaders(complete, email), complete, 'unchanged bytes when nothing is missing');
});

test('throttle: at most N at once per key, others wait in order; keys do not block each other', async (t) => {
  const throttle = createThrottle(2);
  const order: string[] = [];
  let peak = 0;
  const gates: (() => void)[] = [];
  const job = (key: string, name: string) =>
    throttle.run(key, async () => {
      order.push(name);
      peak = Math.max(peak, throttle.active('mx.a'));
      await new Promise<void>((resolve) => gates.push(resolve));
    });
  const runs = [job('mx.a', '1'), job('mx.a', '2'), job('mx.a', '3'), job('mx.b', 'b')];
  await new Promise((r) => setImmediate(r));
  t.deepEqual(order, ['1', '2', 'b']);
  gates.shift()!();
  await new Promise((r) => setImmediate(r));
  t.deepEqual(order, ['1', '2', 'b', '3']);
  while (gates.length) gates.shift()!();
  await Promise.all(runs);
  t.is(peak, 2);
  t.is(throttle.active('mx.a'), 0);
});

test('byte budget: takes wait in arrival order until their bytes are free; one larger than the budget runs alone', async (t) => {
  const budget = createByteBudget(100);
  const order: string[] = [];
  const take = (name: string, bytes: number) =>
    budget.take(bytes).then((release) => {
      order.push(name);
      return release;
    });
  const a = await take('a', 60);
  const pending = [take('b', 50), take('c', 10), take('huge', 1000)];
  await new Promise((r) => setImmediate(r));
  t.deepEqual(order, ['a'], 'b does not fit; c, small enough, still waits behind it (no starving b)');
  a();
  a();
  await new Promise((r) => setImmediate(r));
  t.deepEqual(order, ['a', 'b', 'c'], 'a released once, however often called');
  t.is(budget.inUse(), 60);
  const [b, c, huge] = [await pending[0], await pending[1], pending[2]];
  b();
  await new Promise((r) => setImmediate(r));
  t.deepEqual(order, ['a', 'b', 'c'], 'the huge one needs the whole budget: c still holds 10');
  c();
  (await huge)();
  t.deepEqual(order, ['a', 'b', 'c', 'huge']);
  t.is(budget.inUse(), 0);
});
