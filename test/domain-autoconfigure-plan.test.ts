// Auto-configure's plan (shared/domains/autoconfigure-plan.ts) as a pure function: what it replaces, what blocks
// it, and what it adds beside the customer's records.
import test from 'ava';
import { planChanges, valueOf, wantedRecords } from '../shared/domains/autoconfigure-plan.ts';
import { txtChunks, type ZoneRecord } from '../shared/dns/wire.ts';

test('plan: only our own values are replaced; a foreign DKIM or a second SPF blocks ours; CAA is additive', (t) => {
  const domain = 'plan.example';
  const spf = 'v=spf1 include:_spf.postwerk.localhost ~all';
  const wanted = wantedRecords(domain, [
    { record: 'SPF', name: 'send', type: 'TXT', value: spf },
    { record: 'DKIM', name: 's1._domainkey', type: 'TXT', value: 'v=DKIM1; k=rsa; p=NEW' },
    { record: 'TrackingCAA', name: '@', type: 'CAA', value: '0 issue "letsencrypt.org"' },
  ]);
  const txt = (name: string, value: string): ZoneRecord => ({ name, ttl: 60, type: 'TXT', data: txtChunks(value) });
  const observed = new Map<string, ZoneRecord[]>([
    [
      'send.plan.example TXT',
      [txt('send.plan.example', 'v=spf1 include:_spf.old.example ~all'), txt('send.plan.example', 'hello')],
    ],
    ['s1._domainkey.plan.example TXT', [txt('s1._domainkey.plan.example', 'v=DKIM1; k=rsa; p=SOMEONE')]],
    [
      'plan.example CAA',
      [{ name: 'plan.example', ttl: 60, type: 'CAA', data: { flags: 0, tag: 'issue', value: 'other-ca.example' } }],
    ],
  ]);
  const owned = new Set(['send.plan.example TXT v=spf1 include:_spf.old.example ~all']);
  const plan = planChanges(wanted, observed, owned);
  t.deepEqual(
    plan.actions.map((a) => a.line),
    [
      `send.plan.example TXT "${spf}" (replaces "v=spf1 include:_spf.old.example ~all")`,
      'plan.example CAA 0 issue "letsencrypt.org"',
    ],
  );
  t.deepEqual(plan.conflicts, [
    's1._domainkey.plan.example TXT: found "v=DKIM1; k=rsa; p=SOMEONE", wanted "v=DKIM1; k=rsa; p=NEW"',
  ]);
  t.deepEqual(
    plan.changes.map((c) => `${c.op} ${c.record.type} ${c.record.ttl}`),
    ['delete TXT 60', 'add TXT 60', 'add CAA 60'],
  );
  t.deepEqual(
    plan.changes.filter((c) => c.op === 'delete').map((c) => valueOf(c.record)),
    ['v=spf1 include:_spf.old.example ~all'],
    'only our own value is deleted',
  );
  t.deepEqual(
    plan.prerequisites.map((q) => `${q.kind} ${q.name} ${q.type}`),
    [
      'rrset_equals send.plan.example TXT',
      'rrset_absent send.plan.example CNAME',
      'rrset_equals plan.example CAA',
      'rrset_absent plan.example CNAME',
    ],
  );
});
