// What auto-configure changes in a customer's zone, decided from what the zone holds now and what we added to
// it before: pure, so every rule has a test without a DNS server.
//
// The invariant: we delete only a value we added ourselves (the `owned` set, from domain_dns_changes). A record
// someone else made is never touched; when it stands where ours must stand alone, it is reported as a conflict
// and ours is not added either:
// - MX at our names: every MX there must be ours (mail for the name would otherwise reach someone else);
// - SPF: one `v=spf1` record per name (RFC 7208 §4.5: two make SPF fail with permerror);
// - DKIM: one TXT record at the selector (RFC 6376 §3.6.2.2);
// - CNAME: nothing else at the name, and nothing at a name that has a CNAME (RFC 1034 §3.6.2, RFC 2181 §10.1);
// - CAA is additive: our `issue` goes next to the customer's, and no CAA at all already lets our CA issue.
import { verdictBimi, verdictCaa, verdictDkim, verdictMx, verdictSpf, type Caa } from './verdicts.ts';
import { fqdn } from './names.ts';
import type { DesiredRecord } from './records.ts';
import type { Change, Prerequisite } from '../dns/update.ts';
import { txtChunks, txtText, type RrData, type RrType, type ZoneRecord } from '../dns/wire.ts';

/** Records we add get this TTL unless their RRset exists already (then they take its TTL, leaving it as it was). */
export const DEFAULT_TTL = 3600;

export interface Wanted {
  record: DesiredRecord;
  name: string;
  type: RrType;
  data: RrData;
  value: string;
}

export interface Action {
  kind: 'created' | 'updated';
  line: string;
  key: string;
  add: ZoneRecord | null;
  deletes: ZoneRecord[];
}

export interface Plan {
  actions: Action[];
  conflicts: string[];
  prerequisites: Prerequisite[];
  changes: Change[];
}

/** `name TYPE` of an RRset. */
export const rrsetKey = (name: string, type: string) => `${name.toLowerCase()} ${type}`;
/** `name TYPE value` of one record, as domain_dns_changes keeps it. */
export const recordKey = (name: string, type: string, value: string) => `${rrsetKey(name, type)} ${value}`;

const host = (h: string) => h.toLowerCase().replace(/\.$/, '');

/** The value of a record in the presentation form we compare, store and show. */
export function valueOf(rr: RrData): string {
  switch (rr.type) {
    case 'MX':
      return `${rr.data.preference} ${host(rr.data.exchange)}`;
    case 'TXT':
      return txtText(rr.data);
    case 'CAA':
      return `${rr.data.flags} ${rr.data.tag} "${rr.data.value}"`;
    default:
      return host(rr.data);
  }
}

const shown = (type: string, value: string) => (type === 'TXT' ? `"${value}"` : value);
export const describe = (name: string, type: string, value: string) => `${name} ${type} ${shown(type, value)}`;

function dataOf(r: DesiredRecord): RrData {
  switch (r.type) {
    case 'MX':
      return { type: 'MX', data: { preference: r.priority ?? 10, exchange: r.value } };
    case 'TXT':
      return { type: 'TXT', data: txtChunks(r.value) };
    case 'CNAME':
      return { type: 'CNAME', data: r.value };
    case 'CAA': {
      const m = /^(\d+)\s+(\S+)\s+"(.*)"$/.exec(r.value);
      if (!m) throw new Error(`unexpected CAA value ${r.value}`);
      return { type: 'CAA', data: { flags: Number(m[1]), tag: m[2], value: m[3] } };
    }
  }
}

export function wantedRecords(domain: string, records: DesiredRecord[]): Wanted[] {
  return records.map((record) => {
    const data = dataOf(record);
    return { record, name: fqdn(record.name, domain), type: record.type, data, value: valueOf(data) };
  });
}

/** Types that may not share a name with a CNAME, looked up at the name of a CNAME we want. */
const BESIDE_CNAME: RrType[] = ['A', 'AAAA', 'MX', 'TXT', 'CAA'];

/** The RRsets the planner reads for these records: their own, and what decides whether they may stand there. */
export function rrsetsToRead(wanted: Wanted[]): { name: string; type: RrType }[] {
  const out = new Map<string, { name: string; type: RrType }>();
  const add = (name: string, type: RrType) => out.set(rrsetKey(name, type), { name, type });
  for (const w of wanted) {
    add(w.name, w.type);
    if (w.type === 'CNAME') for (const t of BESIDE_CNAME) add(w.name, t);
    else add(w.name, 'CNAME');
  }
  return [...out.values()];
}

/** Whether the zone already satisfies the record, judged as verification will judge it. */
function satisfied(w: Wanted, found: ZoneRecord[]): boolean {
  const ok = <T>(records: T[]) => (records.length ? { status: 'ok' as const, records } : { status: 'nodata' as const });
  switch (w.type) {
    case 'MX':
      return (
        verdictMx(
          w.record,
          ok(
            found.flatMap((r) => (r.type === 'MX' ? [{ exchange: r.data.exchange, priority: r.data.preference }] : [])),
          ),
        ).result === 'verified'
      );
    case 'TXT': {
      const texts = ok(found.flatMap((r) => (r.type === 'TXT' ? [txtText(r.data)] : [])));
      const verdict = w.record.record === 'DKIM' ? verdictDkim : w.record.record === 'BIMI' ? verdictBimi : verdictSpf;
      return verdict(w.record, texts).result === 'verified';
    }
    case 'CAA':
      return (
        verdictCaa(
          w.record,
          ok(
            found.flatMap((r) =>
              r.type === 'CAA' ? [{ critical: r.data.flags, [r.data.tag]: r.data.value } as Caa] : [],
            ),
          ),
        ).result === 'verified'
      );
    default:
      return found.length === 1 && valueOf(found[0]) === w.value;
  }
}

/** Records at our RRset that must go for ours to be right (see the rules at the top). */
function competes(w: Wanted, r: ZoneRecord): boolean {
  if (w.type === 'CAA') return false;
  // SPF and BIMI are one record per name (RFC 7208 §4.5; BIMI's v=BIMI1 record likewise); other TXT can stay.
  if (w.type === 'TXT' && w.record.record === 'SPF')
    return r.type === 'TXT' && /^v=spf1(\s|$)/i.test(txtText(r.data).trim());
  if (w.type === 'TXT' && w.record.record === 'BIMI')
    return r.type === 'TXT' && /^v=BIMI1\s*(;|$)/i.test(txtText(r.data).trim());
  return true;
}

export function planChanges(wanted: Wanted[], observed: Map<string, ZoneRecord[]>, owned: Set<string>): Plan {
  const out: Plan = { actions: [], conflicts: [], prerequisites: [], changes: [] };
  const seenPrereq = new Set<string>();
  const at = (name: string, type: RrType) => observed.get(rrsetKey(name, type)) ?? [];
  const require = (name: string, type: RrType) => {
    const k = rrsetKey(name, type);
    if (seenPrereq.has(k)) return;
    seenPrereq.add(k);
    const records = at(name, type);
    out.prerequisites.push(
      records.length ? { kind: 'rrset_equals', name, type, records } : { kind: 'rrset_absent', name, type },
    );
  };
  const seenChange = new Set<string>();
  const change = (c: Change) => {
    const k = `${c.op} ${recordKey(c.record.name, c.record.type, valueOf(c.record))}`;
    if (!seenChange.has(k)) out.changes.push(c);
    seenChange.add(k);
  };
  const wantedValues = new Map<string, Set<string>>();
  for (const w of wanted)
    wantedValues.set(rrsetKey(w.name, w.type), (wantedValues.get(rrsetKey(w.name, w.type)) ?? new Set()).add(w.value));

  for (const w of wanted) {
    const key = rrsetKey(w.name, w.type);
    const found = at(w.name, w.type);
    if (satisfied(w, found)) continue;
    const wantedLine = describe(w.name, w.type, w.value);
    const conflict = (blocking: ZoneRecord[]) => {
      const items = blocking.map((r) =>
        r.type === w.type ? shown(r.type, valueOf(r)) : `${r.type} ${shown(r.type, valueOf(r))}`,
      );
      out.conflicts.push(`${w.name} ${w.type}: found ${items.join(', ')}, wanted ${shown(w.type, w.value)}`);
    };
    const beside = w.type === 'CNAME' ? BESIDE_CNAME : (['CNAME'] as RrType[]);
    const blockers = beside.flatMap((t) => at(w.name, t));
    if (blockers.length) {
      conflict(blockers);
      continue;
    }
    const mine = wantedValues.get(key)!;
    const competitors = found.filter((r) => competes(w, r) && !mine.has(valueOf(r)));
    const foreign = competitors.filter((r) => !owned.has(recordKey(w.name, w.type, valueOf(r))));
    if (foreign.length) {
      conflict(foreign);
      continue;
    }
    const present = found.some((r) => valueOf(r) === w.value);
    const add: ZoneRecord | null = present
      ? null
      : ({ ...w.data, name: w.name, ttl: found[0]?.ttl ?? DEFAULT_TTL } as ZoneRecord);
    if (!add && competitors.length === 0) continue;
    for (const t of [w.type, ...beside]) require(w.name, t);
    for (const r of competitors) change({ op: 'delete', record: r });
    if (add) change({ op: 'add', record: add });
    const replaced = competitors.map((r) => shown(r.type, valueOf(r))).join(' and ');
    out.actions.push({
      kind: competitors.length ? 'updated' : 'created',
      line: competitors.length ? `${wantedLine} (replaces ${replaced})` : wantedLine,
      key,
      add,
      deletes: competitors,
    });
  }
  return out;
}
