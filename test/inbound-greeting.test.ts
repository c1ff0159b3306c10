// The MX's pause before its 220 (shared/lib-internals/smtp-server-greeting.ts): an early talker is cut with 421, and a
// client address that waited out the pause is greeted at once on its next connections for a day (postscreen's greet
// TTL), while an address that talked early still meets the pause. Clients connect from distinct loopback addresses.
import test from 'ava';
import net, { type AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { GreetingPasses, MxSmtpServer } from '../shared/lib-internals/smtp-server-greeting.ts';

const PAUSE_MS = 2000;
let server: MxSmtpServer;
let port: number;

test.before(async () => {
  server = new MxSmtpServer(
    { authOptional: true, disableReverseLookup: true, logger: false, name: 'mx.greeting.test' },
    PAUSE_MS,
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.server.address() as AddressInfo).port;
});
test.after.always(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Connects from `from`; answers the first reply line and how long it took, writing EHLO at once if `early`. */
function firstReply(from: string, early = false): Promise<{ line: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
    let text = '';
    socket.on('connect', () => early && socket.write('EHLO early.test\r\n'));
    socket.on('data', (d) => {
      text += d.toString();
      const line = /^(\d{3} [^\r\n]*)\r\n/m.exec(text)?.[1];
      if (!line) return;
      socket.destroy();
      resolve({ line, ms: performance.now() - t0 });
    });
    socket.on('error', reject);
  });
}

test.serial(
  'the first connection from an address waits for the pause; the next ones from it are greeted at once',
  async (t) => {
    const first = await firstReply('127.0.0.3');
    t.regex(first.line, /^220 mx\.greeting\.test ESMTP/);
    t.true(first.ms >= PAUSE_MS - 50, `greeted after ${first.ms} ms`);
    t.true(server.passes.has('127.0.0.3'));
    for (let i = 0; i < 3; i++) {
      const next = await firstReply('127.0.0.3');
      t.regex(next.line, /^220 /);
      t.true(next.ms < PAUSE_MS / 2, `greeted after ${next.ms} ms`);
    }
  },
);

test.serial('an early talker gets 421, is not remembered, and meets the pause again next time', async (t) => {
  const early = await firstReply('127.0.0.4', true);
  t.regex(early.line, /^421 .*talk too soon/i);
  t.false(server.passes.has('127.0.0.4'));
  const polite = await firstReply('127.0.0.4');
  t.regex(polite.line, /^220 /);
  t.true(polite.ms >= PAUSE_MS - 50, `greeted after ${polite.ms} ms`);
});

test('a pass lasts its TTL, and the oldest pass goes first when the table is full', (t) => {
  let now = 1_000;
  const passes = new GreetingPasses(60_000, () => now);
  t.false(passes.has('192.0.2.1'));
  passes.add('192.0.2.1');
  now += 59_999;
  t.true(passes.has('192.0.2.1'));
  now += 1;
  t.false(passes.has('192.0.2.1'), 'expired');
  for (let i = 0; i <= 100_000; i++) passes.add(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
  t.false(passes.has('10.0.0.0'), 'the oldest of 100,001 evicted');
  t.true(passes.has('10.0.0.1'));
  t.true(passes.has('10.1.134.160'), 'the newest kept');
});
