import dgram from 'node:dgram';
import { promises as nodeDns } from 'node:dns';
import test from 'ava';
import { startDnsServer, type DnsFailureMode, type DnsServer } from './helpers/dns-server.ts';
import {
  classifyDnsError,
  createResolver,
  orderMx,
  resolveMxHosts,
  type DnsResolver,
  type MxLookups,
} from '../shared/dns/resolver.ts';

// Short waits so the lookups that are meant to time out finish fast: 250 ms × 2 tries × 1 server.
const TIMEOUT_MS = 250;
// Where an answer is expected (an error code or records, not a timeout), a try gets longer: on a busy CI machine
// the server in this process can take more than 250 ms to answer, and the lookup would end as ETIMEOUT.
const ANSWERED_TIMEOUT_MS = 3000;
let server: DnsServer;
let dns: DnsResolver;

test.before(async () => {
  server = await startDnsServer();
  dns = createResolver({ servers: [server.address], timeoutMs: ANSWERED_TIMEOUT_MS, tries: 2 });
});
test.after.always(async () => {
  await server?.close();
});

// As long as an RSA-2048 key record: 410 bytes, more than one character-string holds.
const DKIM_KEY = 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA' + 'x'.repeat(342) + 'IDAQAB';

test('each record type comes back as published, names lowercased without the trailing dot', async (t) => {
  server.set('types.test', 'TXT', ['v=spf1 include:spf.platform.test ~all', 'google-site-verification=abc']);
  server.set('types.test', 'MX', [{ exchange: 'MX1.Platform.TEST.', priority: 10 }]);
  server.set('types.test', 'A', ['192.0.2.10', '192.0.2.11']);
  server.set('types.test', 'AAAA', ['2001:db8::10']);
  server.set('types.test', 'CAA', [
    { tag: 'issue', value: 'letsencrypt.org' },
    { flags: 128, tag: 'iodef', value: 'mailto:ca@types.test' },
  ]);
  server.set('www.types.test', 'CNAME', ['Edge.Platform.TEST.']);

  t.deepEqual(await dns.txt('types.test'), {
    status: 'ok',
    records: ['v=spf1 include:spf.platform.test ~all', 'google-site-verification=abc'],
  });
  t.deepEqual(await dns.mx('types.test'), { status: 'ok', records: [{ exchange: 'mx1.platform.test', priority: 10 }] });
  t.deepEqual(await dns.a('types.test'), { status: 'ok', records: ['192.0.2.10', '192.0.2.11'] });
  t.deepEqual(await dns.aaaa('types.test'), { status: 'ok', records: ['2001:db8::10'] });
  t.deepEqual(await dns.caa('types.test'), {
    status: 'ok',
    records: [
      { critical: 0, issue: 'letsencrypt.org' },
      { critical: 128, iodef: 'mailto:ca@types.test' },
    ],
  });
  t.deepEqual(await dns.cname('www.types.test'), { status: 'ok', records: ['edge.platform.test'] });
});

test('names are case-insensitive and a trailing dot is the same name', async (t) => {
  server.set('mixed.case.test', 'TXT', ['hello']);
  t.deepEqual(await dns.txt('MiXeD.Case.TEST.'), { status: 'ok', records: ['hello'] });
});

test('a TXT record split into 255-byte strings is joined with nothing between them', async (t) => {
  server.set('s1._domainkey.chunks.test', 'TXT', [DKIM_KEY]);
  server.set('split.chunks.test', 'TXT', [
    ['v=spf1 ip4:192.0.2.0/24', ' include:spf.platform.test', ' ~all'],
    'second record',
  ]);

  // On the wire the key really is several character-strings.
  const raw = new nodeDns.Resolver();
  raw.setServers([server.address]);
  t.deepEqual(
    (await raw.resolveTxt('s1._domainkey.chunks.test'))[0].map((s) => s.length),
    [255, 155],
  );

  t.deepEqual(await dns.txt('s1._domainkey.chunks.test'), { status: 'ok', records: [DKIM_KEY] });
  t.deepEqual(await dns.txt('split.chunks.test'), {
    status: 'ok',
    records: ['v=spf1 ip4:192.0.2.0/24 include:spf.platform.test ~all', 'second record'],
  });
});

test('a name that does not exist is nxdomain; one without the asked type is nodata', async (t) => {
  server.set('only-txt.absent.test', 'TXT', ['x']);
  for (const method of ['txt', 'mx', 'cname', 'a', 'aaaa', 'caa'] as const) {
    t.deepEqual(await dns[method]('missing.absent.test'), { status: 'nxdomain' }, method);
    if (method !== 'txt') t.deepEqual(await dns[method]('only-txt.absent.test'), { status: 'nodata' }, method);
  }
});

test('a name DNS cannot carry is nxdomain without a query; the empty name does not ask the root', async (t) => {
  const before = server.queries.length;
  t.deepEqual(await dns.txt(''), { status: 'nxdomain' });
  t.deepEqual(await dns.txt('a..b.test'), { status: 'nxdomain' });
  t.deepEqual(await dns.mx(`${'x'.repeat(64)}.test`), { status: 'nxdomain' });
  t.deepEqual(
    server.queries.slice(before).filter((q) => ['', '.', 'a..b.test'].includes(q.name) || q.name.includes('xxxx')),
    [],
  );
});

const failures: Array<[DnsFailureMode, string]> = [
  ['servfail', 'ESERVFAIL'],
  ['refused', 'EREFUSED'],
  ['timeout', 'ETIMEOUT'],
  ['garbage', 'EBADRESP'],
  // c-ares drops an answer whose id is not its query's, so a spoof is never taken: the lookup times out.
  ['wrong-id', 'ETIMEOUT'],
];
for (const [mode, error] of failures) {
  test(`${mode}: every lookup is temporary (${error}), within the budget`, async (t) => {
    // A resolver of its own: c-ares answers a malformed packet by closing the socket and sending every query
    // in flight on it again, at the cost of a try, so another test's garbage would end these as EBADRESP.
    const timeoutMs = error === 'ETIMEOUT' ? TIMEOUT_MS : ANSWERED_TIMEOUT_MS;
    const own = createResolver({ servers: [server.address], timeoutMs, tries: 2 });
    const name = `${mode}.fail.test`;
    // Records exist, so an answer that got through would be ok.
    server.set(name, 'TXT', ['published']);
    server.set(name, 'MX', [{ exchange: 'mx.fail.test', priority: 10 }]);
    server.set(name, 'A', ['192.0.2.1']);
    server.fail(name, mode);
    for (const method of ['txt', 'mx', 'a'] as const) {
      const started = Date.now();
      t.deepEqual(await own[method](name), { status: 'temporary', error }, method);
      // No hang; the budget itself (not c-ares's doubling waits) is the silent server's test below, with more room
      // between the two: 1 s of room here was once too little for a loaded CI machine's late timers.
      t.true(Date.now() - started < 2 * timeoutMs + 3000, `${method} took ${Date.now() - started} ms`);
    }
    t.deepEqual(await own.resolveMxHosts(name), { status: 'temporary', error });
    t.deepEqual(await own.followCname(name), { status: 'temporary', error });
  });
}

test('nobody listening at the server is temporary (ECONNREFUSED)', async (t) => {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  const closed = createResolver({ servers: [`127.0.0.1:${port}`], timeoutMs: TIMEOUT_MS, tries: 2 });
  t.deepEqual(await closed.txt('anything.test'), { status: 'temporary', error: 'ECONNREFUSED' });
});

test('a silent server costs timeout × tries per server, not the doubling waits of c-ares', async (t) => {
  server.fail('silent.budget.test', 'timeout');
  // Alone, c-ares would wait 1 s, 2 s then 4 s, and node checks its timers once a second: 7 s or more. The budget is
  // 3 s; the upper bound leaves 2.5 s for a loaded machine's late timers (a CI run once saw a 2 s budget take 3.3 s).
  const slow = createResolver({ servers: [server.address], timeoutMs: 1000, tries: 3 });
  const started = Date.now();
  t.deepEqual(await slow.txt('silent.budget.test'), { status: 'temporary', error: 'ETIMEOUT' });
  const took = Date.now() - started;
  t.true(took >= 2900 && took < 5500, `took ${took} ms`);
});

test('errors that are not DNS outcomes are thrown; unknown codes are temporary', (t) => {
  const bug = Object.assign(new TypeError('bad'), { code: 'ERR_INVALID_ARG_TYPE' });
  t.is(
    t.throws(() => classifyDnsError(bug)),
    bug,
  );
  t.throws(() => classifyDnsError(new Error('no code')), { message: 'no code' });
  t.deepEqual(classifyDnsError(Object.assign(new Error(), { code: 'ENOTIMP' })), {
    status: 'temporary',
    error: 'ENOTIMP',
  });
  t.deepEqual(classifyDnsError(Object.assign(new Error(), { code: 'ESOMETHINGNEW' })), {
    status: 'temporary',
    error: 'ESOMETHINGNEW',
  });
});

test('followCname walks the chain to the name that is no alias', async (t) => {
  server.set('track.chain.test', 'CNAME', ['hop.chain.test']);
  server.set('hop.chain.test', 'CNAME', ['Tracking.Platform.chain.test.']);
  server.set('tracking.platform.chain.test', 'A', ['192.0.2.50']);
  server.set('plain.chain.test', 'A', ['192.0.2.51']);

  t.deepEqual(await dns.followCname('Track.Chain.test'), {
    status: 'ok',
    chain: ['track.chain.test', 'hop.chain.test'],
    target: 'tracking.platform.chain.test',
  });
  t.deepEqual(await dns.followCname('plain.chain.test'), { status: 'ok', chain: [], target: 'plain.chain.test' });
  t.deepEqual(await dns.followCname('nothing.chain.test'), { status: 'nxdomain' });
  // The server answers an A question at the alias with the chain and the address, as authoritative servers do.
  t.deepEqual(await dns.a('track.chain.test'), { status: 'ok', records: ['192.0.2.50'] });
});

test('followCname: a dangling chain is nxdomain, a loop or too many hops is temporary', async (t) => {
  server.set('dangling.loop.test', 'CNAME', ['gone.loop.test']);
  t.deepEqual(await dns.followCname('dangling.loop.test'), { status: 'nxdomain' });

  server.set('a.loop.test', 'CNAME', ['b.loop.test']);
  server.set('b.loop.test', 'CNAME', ['a.loop.test']);
  t.deepEqual(await dns.followCname('a.loop.test'), { status: 'temporary', error: 'cname chain too long' });

  server.set('self.loop.test', 'CNAME', ['self.loop.test']);
  t.deepEqual(await dns.followCname('self.loop.test'), { status: 'temporary', error: 'cname chain too long' });

  // hop0 → hop1 → … → hop9 (an address): nine aliases.
  for (let i = 0; i < 9; i++) server.set(`hop${i}.long.test`, 'CNAME', [`hop${i + 1}.long.test`]);
  server.set('hop9.long.test', 'A', ['192.0.2.9']);
  t.deepEqual(await dns.followCname('hop0.long.test'), { status: 'temporary', error: 'cname chain too long' });
  t.deepEqual(await dns.followCname('hop1.long.test'), {
    status: 'ok',
    chain: [1, 2, 3, 4, 5, 6, 7, 8].map((i) => `hop${i}.long.test`),
    target: 'hop9.long.test',
  });
  t.deepEqual(await dns.followCname('hop0.long.test', 9), {
    status: 'ok',
    chain: [0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => `hop${i}.long.test`),
    target: 'hop9.long.test',
  });
});

test('MX hosts: lowest preference first', async (t) => {
  server.set('order.mx.test', 'MX', [
    { exchange: 'backup.mx.test', priority: 20 },
    { exchange: 'primary.mx.test', priority: 5 },
    { exchange: 'last.mx.test', priority: 30 },
  ]);
  t.deepEqual(await dns.resolveMxHosts('order.mx.test'), {
    status: 'ok',
    implicit: false,
    hosts: [
      { exchange: 'primary.mx.test', priority: 5 },
      { exchange: 'backup.mx.test', priority: 20 },
      { exchange: 'last.mx.test', priority: 30 },
    ],
  });
});

test('MX hosts: equal preferences are shuffled', async (t) => {
  server.set('ties.mx.test', 'MX', [
    { exchange: 'a.mx.test', priority: 10 },
    { exchange: 'b.mx.test', priority: 10 },
    { exchange: 'z.mx.test', priority: 20 },
  ]);
  const a = { exchange: 'a.mx.test', priority: 10 };
  const b = { exchange: 'b.mx.test', priority: 10 };
  const z = { exchange: 'z.mx.test', priority: 20 };
  // Fisher-Yates with j = floor(random × (i + 1)): 0.99 keeps the order, 0 swaps the pair.
  t.deepEqual(await resolveMxHosts(dns, 'ties.mx.test', () => 0.99), {
    status: 'ok',
    implicit: false,
    hosts: [a, b, z],
  });
  t.deepEqual(await resolveMxHosts(dns, 'ties.mx.test', () => 0), { status: 'ok', implicit: false, hosts: [b, a, z] });

  // With Math.random each tied host leads sometimes (failing by chance: 2^-63).
  const leaders = new Set<string>();
  for (let i = 0; i < 64 && leaders.size < 2; i++) {
    const res = await dns.resolveMxHosts('ties.mx.test');
    if (res.status !== 'ok') return t.fail(res.status);
    t.deepEqual(res.hosts.at(-1), z);
    leaders.add(res.hosts[0].exchange);
  }
  t.deepEqual([...leaders].sort(), ['a.mx.test', 'b.mx.test']);
});

test('orderMx keeps a host listed twice once, at its most preferred place', (t) => {
  const hosts = orderMx([
    { exchange: 'b.test', priority: 20 },
    { exchange: 'a.test', priority: 10 },
    { exchange: 'a.test', priority: 30 },
  ]);
  t.deepEqual(hosts, [
    { exchange: 'a.test', priority: 10 },
    { exchange: 'b.test', priority: 20 },
  ]);
});

test('null MX (RFC 7505) says the domain takes no mail', async (t) => {
  server.set('null.mx.test', 'MX', [{ exchange: '.', priority: 0 }]);
  server.set('null.mx.test', 'A', ['192.0.2.20']);
  t.deepEqual(await dns.mx('null.mx.test'), { status: 'ok', records: [{ exchange: '', priority: 0 }] });
  t.deepEqual(await dns.resolveMxHosts('null.mx.test'), { status: 'null_mx' });

  // Published beside real MXs (against RFC 7505 §3), the null MX is skipped and the others take mail.
  server.set('mixed-null.mx.test', 'MX', [
    { exchange: '.', priority: 0 },
    { exchange: 'real.mx.test', priority: 10 },
  ]);
  t.deepEqual(await dns.resolveMxHosts('mixed-null.mx.test'), {
    status: 'ok',
    implicit: false,
    hosts: [{ exchange: 'real.mx.test', priority: 10 }],
  });
});

test('no MX: the domain itself is the host if it has an address (RFC 5321 §5.1), else no mail', async (t) => {
  server.set('v4.implicit.test', 'A', ['192.0.2.30']);
  server.set('v6.implicit.test', 'AAAA', ['2001:db8::30']);
  server.set('txt-only.implicit.test', 'TXT', ['v=spf1 -all']);
  t.deepEqual(await dns.resolveMxHosts('V4.Implicit.test.'), {
    status: 'ok',
    implicit: true,
    hosts: [{ exchange: 'v4.implicit.test', priority: 0 }],
  });
  t.deepEqual(await dns.resolveMxHosts('v6.implicit.test'), {
    status: 'ok',
    implicit: true,
    hosts: [{ exchange: 'v6.implicit.test', priority: 0 }],
  });
  t.deepEqual(await dns.resolveMxHosts('txt-only.implicit.test'), { status: 'no_mail' });
  t.deepEqual(await dns.resolveMxHosts('missing.implicit.test'), { status: 'nxdomain' });
});

test('no MX and an address lookup that failed is temporary, not no_mail', async (t) => {
  const lookups = (a: string, aaaa: string): MxLookups => ({
    mx: async () => ({ status: 'nodata' }),
    a: async () =>
      a === 'temporary'
        ? { status: 'temporary', error: 'ESERVFAIL' }
        : a === 'ok'
          ? { status: 'ok', records: ['192.0.2.1'] }
          : { status: 'nodata' },
    aaaa: async () => (aaaa === 'temporary' ? { status: 'temporary', error: 'ETIMEOUT' } : { status: 'nodata' }),
  });
  t.deepEqual(await resolveMxHosts(lookups('temporary', 'nodata'), 'x.test'), {
    status: 'temporary',
    error: 'ESERVFAIL',
  });
  t.deepEqual(await resolveMxHosts(lookups('nodata', 'temporary'), 'x.test'), {
    status: 'temporary',
    error: 'ETIMEOUT',
  });
  t.deepEqual(await resolveMxHosts(lookups('ok', 'temporary'), 'x.test'), {
    status: 'ok',
    implicit: true,
    hosts: [{ exchange: 'x.test', priority: 0 }],
  });
});

test('an answer too big for UDP comes back truncated and is fetched again over TCP', async (t) => {
  const records = Array.from({ length: 12 }, (_, i) => `verification-${String(i).padStart(2, '0')}=${'k'.repeat(60)}`);
  server.set('big.tcp.test', 'TXT', records);
  // Its own resolver, so no other test's garbage makes c-ares send the question twice.
  const own = createResolver({ servers: [server.address], timeoutMs: ANSWERED_TIMEOUT_MS, tries: 2 });
  t.deepEqual(await own.txt('big.tcp.test'), { status: 'ok', records });
  t.deepEqual(
    server.queries.filter((q) => q.name === 'big.tcp.test').map((q) => q.transport),
    ['udp', 'tcp'],
  );
});
