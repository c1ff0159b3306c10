// The worker's side of verification: which domains a sweep picks up, and when each is looked at again.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { until } from './helpers/wait.ts';
import { sweepDomains } from '../worker/domains.ts';
import { checkDomain, leaseDueDomains, leaseEnd } from '../shared/domains/verify.ts';
import { CHECK_WINDOW_MS, nextCheckAt, PENDING_DELAYS_MS, VERIFIED_RECHECK_MS } from '../shared/domains/status.ts';

let p: Platform;
let dns: DnsServer;
test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address });
});
test.after.always(async () => {
  await p?.close();
  await dns?.close();
});

test('the backoff: 1, 2, 5, 10, 15, 30, 60 minutes, then hourly, ending exactly when the 72-hour window closes', (t) => {
  const since = new Date('2026-11-22T00:00:00.000Z');
  const at = (ms: number) => new Date(since.getTime() + ms);
  const delays = [1, 2, 3, 4, 5, 6, 7, 20].map(
    (n) => nextCheckAt('pending', since, n, since)!.getTime() - since.getTime(),
  );
  t.deepEqual(delays, [...PENDING_DELAYS_MS, 3_600_000]);
  t.deepEqual(nextCheckAt('pending', since, 50, at(CHECK_WINDOW_MS - 600_000)), at(CHECK_WINDOW_MS));
  t.is(nextCheckAt('pending', since, 51, at(CHECK_WINDOW_MS)), null);
  t.is(nextCheckAt('partially_failed', since, 51, at(CHECK_WINDOW_MS + 1)), null);
  t.deepEqual(
    nextCheckAt('partially_failed', since, 51, at(CHECK_WINDOW_MS + 1), true),
    at(CHECK_WINDOW_MS + 1 + VERIFIED_RECHECK_MS),
    'one that can send is watched daily',
  );
  t.deepEqual(nextCheckAt('verified', since, 3, at(5000)), at(5000 + VERIFIED_RECHECK_MS));
});

test.serial(
  'a sweep checks new domains and those whose customer asked for verification, leases them, and skips the rest',
  async (t) => {
    const team = await p.createTeam();
    const created = await p.request('POST', '/domains', { key: team.key, body: { name: 'sweep-one.test' } });
    t.is(created.status, 201);
    for (const r of created.body.records) {
      const name = `${r.name}.sweep-one.test`;
      if (r.type === 'MX') dns.set(name, 'MX', [{ exchange: r.value, priority: r.priority }]);
      else dns.set(name, 'TXT', [r.value]);
    }
    // Only this test's domain is due in this database (the managed domain is never swept).
    const checked = await sweepDomains(p.db, p.deps.dns, p.config, p.deps.log);
    t.is(checked, 1);
    let row = await p.db('domains').where({ id: created.body.id }).first();
    t.is(row.status, 'verified');
    t.true(row.next_check_at.getTime() > Date.now() + VERIFIED_RECHECK_MS - 60_000);
    t.is(await sweepDomains(p.db, p.deps.dns, p.config, p.deps.log), 0, 'nothing else is due');

    // The customer asks again: checked on the next sweep.
    const verify = await p.request('POST', `/domains/${created.body.id}/verify`, { key: team.key });
    t.deepEqual(verify.body, { object: 'domain', id: created.body.id });
    row = await p.db('domains').where({ id: created.body.id }).first();
    t.true(row.next_check_at.getTime() <= Date.now());
    t.is(await sweepDomains(p.db, p.deps.dns, p.config, p.deps.log), 1);
  },
);

test.serial('a domain whose records are missing stays pending and is looked at again after a minute', async (t) => {
  const team = await p.createTeam();
  const created = await p.request('POST', '/domains', { key: team.key, body: { name: 'sweep-two.test' } });
  const before = Date.now();
  t.is(await sweepDomains(p.db, p.deps.dns, p.config, p.deps.log), 1);
  const row = await p.db('domains').where({ id: created.body.id }).first();
  t.is(row.status, 'pending');
  t.is(row.check_count, 1);
  const delay = row.next_check_at.getTime() - before;
  t.true(delay >= 55_000 && delay <= 65_000, `next check in ${delay} ms`);
  const records = (await p.request('GET', `/domains/${created.body.id}`, { key: team.key })).body.records;
  t.true(records.every((r: { status: string }) => r.status === 'pending'));
});

test.serial('a verification asked for while a sweep looks at the domain is not lost to that sweep', async (t) => {
  const team = await p.createTeam();
  const created = await p.request('POST', '/domains', { key: team.key, body: { name: 'sweep-three.test' } });
  // A sweep leases the domain and looks its records up (none published yet)...
  const now = new Date();
  t.deepEqual(await leaseDueDomains(p.db, now, 50), [created.body.id]);
  // ...the customer asks again before it writes what it found (auto-configure asks the same way)...
  const asked = Date.now();
  t.is((await p.request('POST', `/domains/${created.body.id}/verify`, { key: team.key })).status, 200);
  await checkDomain(p.db, p.deps.dns, p.config, created.body.id, now, leaseEnd(now));
  // ...and the domain is due at once, not a minute later: the next sweep sees the records published since.
  const row = await p.db('domains').where({ id: created.body.id }).first();
  t.is(row.status, 'pending');
  t.true(row.next_check_at.getTime() <= asked + 1000, `next check ${row.next_check_at.getTime() - asked} ms after`);
  for (const r of created.body.records) {
    const name = `${r.name}.sweep-three.test`;
    if (r.type === 'MX') dns.set(name, 'MX', [{ exchange: r.value, priority: r.priority }]);
    else dns.set(name, 'TXT', [r.value]);
  }
  t.is(await sweepDomains(p.db, p.deps.dns, p.config, p.deps.log), 1);
  t.is((await p.db('domains').where({ id: created.body.id }).first()).status, 'verified');
});

test.serial(
  'a slow check that started before a newer one finished does not undo what the newer one found',
  async (t) => {
    const team = await p.createTeam();
    const name = 'sweep-four.test';
    const created = await p.request('POST', '/domains', { key: team.key, body: { name } });
    // A sweep looks the records up before they are published; its answers arrive late (a slow network): each lookup
    // goes to the DNS server at once, its answer is held until `release`.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let answered = 0;
    const late =
      <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
      async (...a: A) => {
        const answer = await fn(...a);
        answered++;
        await held;
        return answer;
      };
    const real = p.deps.dns;
    const slow = {
      txt: late((n: string) => real.txt(n)),
      mx: late((n: string) => real.mx(n)),
      caa: late((n: string) => real.caa(n)),
      cname: late((n: string) => real.cname(n)),
    };
    const first = new Date();
    t.deepEqual(await leaseDueDomains(p.db, first, 50), [created.body.id]);
    const older = checkDomain(p.db, slow, p.config, created.body.id, first, leaseEnd(first));
    // One lookup per name and type (two records on one TXT name share it).
    const lookups = new Set(created.body.records.map((r: { type: string; name: string }) => `${r.type} ${r.name}`));
    await until(() => answered >= lookups.size, { what: 'the slow check has its (empty) answers' });

    // The records are published, the customer asks again, and a second sweep finds them.
    for (const r of created.body.records) {
      const owner = `${r.name}.${name}`;
      if (r.type === 'MX') dns.set(owner, 'MX', [{ exchange: r.value, priority: r.priority }]);
      else dns.set(owner, 'TXT', [r.value]);
    }
    t.is((await p.request('POST', `/domains/${created.body.id}/verify`, { key: team.key })).status, 200);
    const second = new Date(Math.max(Date.now(), first.getTime() + 1));
    t.is((await checkDomain(p.db, real, p.config, created.body.id, second, leaseEnd(second)))?.status, 'verified');
    const after = await p.db('domains').where({ id: created.body.id }).first();

    // The first check's answers arrive now: what it would write is older than what is there, and nothing changes.
    release();
    await older;
    const row = await p.db('domains').where({ id: created.body.id }).first();
    t.is(row.status, 'verified');
    t.deepEqual(row.last_checked_at, second);
    t.deepEqual(row.next_check_at, after.next_check_at);
    const records = await p.db('domain_records').where({ domain_id: created.body.id }).select('status');
    t.deepEqual([...new Set(records.map((r: { status: string }) => r.status))], ['verified']);
  },
);

test.serial(
  'asking for verification makes a domain not yet looked at, or failed when its window closed, pending at once',
  async (t) => {
    const team = await p.createTeam();
    const created = await p.request('POST', '/domains', { key: team.key, body: { name: 'sweep-five.test' } });
    t.is(created.body.status, 'not_started');
    const id = created.body.id;
    const shown = async () => (await p.request('GET', `/domains/${id}`, { key: team.key })).body;
    const updates = async () => (await p.db('events').where({ team_id: team.id, type: 'domain.updated' })).length;

    // Not looked at yet: the request itself says "verification in progress", with a domain.updated.
    t.is((await p.request('POST', `/domains/${id}/verify`, { key: team.key })).status, 200);
    let domain = await shown();
    t.is(domain.status, 'pending');
    t.true(domain.records.every((r: { status: string }) => r.status === 'pending'));
    t.is(await updates(), 1);

    // The records never appear: the last check of the 72-hour window fails the domain.
    const late = new Date(Date.now() + CHECK_WINDOW_MS + 1000);
    t.is((await checkDomain(p.db, p.deps.dns, p.config, id, late))?.status, 'failed');
    domain = await shown();
    t.true(domain.records.every((r: { status: string }) => r.status === 'failed'));
    t.is(await updates(), 2);

    // Asked again: a new window, pending until the check says otherwise, and the worker looks at once.
    t.is((await p.request('POST', `/domains/${id}/verify`, { key: team.key })).status, 200);
    domain = await shown();
    t.is(domain.status, 'pending');
    t.true(domain.records.every((r: { status: string }) => r.status === 'pending'));
    t.is(await updates(), 3);
    const row = await p.db('domains').where({ id }).first();
    t.is(row.check_count, 0);
    t.true(row.next_check_at.getTime() <= Date.now());

    // A verified domain asked again is checked again and says nothing until the check finds a change.
    for (const r of domain.records) {
      const name = `${r.name}.sweep-five.test`;
      if (r.type === 'MX') dns.set(name, 'MX', [{ exchange: r.value, priority: r.priority }]);
      else dns.set(name, 'TXT', [r.value]);
    }
    const later = new Date(late.getTime() + 1000); // the failing check's clock ran ahead
    t.is((await checkDomain(p.db, p.deps.dns, p.config, id, later))?.status, 'verified');
    const events = await updates();
    t.is((await p.request('POST', `/domains/${id}/verify`, { key: team.key })).status, 200);
    t.is((await shown()).status, 'verified');
    t.is(await updates(), events);
  },
);
