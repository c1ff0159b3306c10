// One verification pass over a domain: look every record up through the configured resolver, keep each
// verdict, derive the domain status, schedule the next pass, activate a rotated DKIM key once its record
// verifies, and record domain.updated when anything a customer sees changed.
import type { Knex } from 'knex';
import { recordEvent } from '../events.ts';
import { fqdn } from './names.ts';
import { desiredRecords, type PlatformHosts } from './records.ts';
import {
  decidesStatus,
  domainStatus,
  nextCheckAt,
  recordStatus,
  sendingRecordsVerified,
  CHECK_WINDOW_MS,
  type RecordStatus,
} from './status.ts';
import { publishedKeys, recordsOf, syncRecords, type DkimKeyRow, type DomainRow, type RecordRow } from './store.ts';
import { domainEventData } from './present.ts';
import { logoUrlOf } from './brand-store.ts';
import {
  verdictBimi,
  verdictCaa,
  verdictCname,
  verdictDkim,
  verdictMx,
  verdictSpf,
  type Caa,
  type CnameLookup,
  type Lookup,
  type Mx,
  type Verdict,
} from './verdicts.ts';

export interface VerifyResolver {
  txt(name: string): Promise<Lookup<string>>;
  mx(name: string): Promise<Lookup<Mx>>;
  caa(name: string): Promise<Lookup<Caa>>;
  cname(name: string): Promise<Lookup<string>>;
}

const MAX_CNAME_HOPS = 8;

/**
 * Walks the CNAME chain from `name` until it reaches `goal` (our tracking host, which need not resolve further
 * from the customer's resolver) or ends; a chain longer than MAX_CNAME_HOPS is a temporary failure.
 */
async function cnameChain(resolver: VerifyResolver, name: string, goal: string): Promise<CnameLookup> {
  const chain: string[] = [];
  let current = name.toLowerCase();
  for (let hop = 0; hop <= MAX_CNAME_HOPS; hop++) {
    if (current === goal.toLowerCase()) return { status: 'ok', chain, target: current };
    const answer = await resolver.cname(current);
    if (answer.status === 'temporary' || (answer.status !== 'ok' && hop === 0)) return answer;
    if (answer.status !== 'ok') return { status: 'ok', chain, target: current };
    chain.push(current);
    current = answer.records[0].toLowerCase().replace(/\.$/, '');
  }
  return { status: 'temporary', error: 'cname chain too long' };
}

export const DKIM_RETIRE_AFTER_MS = 7 * 24 * 3600_000;
const LEASE_MS = 2 * 60_000;
const ROTATION_RECHECK_MS = 5 * 60_000;
const RETRY_KEPT_MS = 3600_000;

function lookupsFor(resolver: VerifyResolver, domain: string) {
  const cache = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    if (!cache.has(key)) cache.set(key, fn());
    return cache.get(key) as Promise<T>;
  };
  return async (r: RecordRow): Promise<Verdict> => {
    const name = fqdn(r.name, domain);
    switch (r.type) {
      case 'MX':
        return verdictMx(r, await once(`MX ${name}`, () => resolver.mx(name)));
      case 'TXT': {
        const txt = await once(`TXT ${name}`, () => resolver.txt(name));
        return r.record === 'DKIM'
          ? verdictDkim(r, txt)
          : r.record === 'BIMI'
            ? verdictBimi(r, txt)
            : verdictSpf(r, txt);
      }
      case 'CNAME':
        return verdictCname(r, await once(`CNAME ${name}`, () => cnameChain(resolver, name, r.value)));
      case 'CAA':
        return verdictCaa(r, await once(`CAA ${name}`, () => resolver.caa(name)));
      default:
        return { result: 'temporary', found: null, error: `unknown record type ${r.type}` };
    }
  };
}

/** When a lease taken at `now` runs out: a later sweep picks the domain up again. */
export const leaseEnd = (now: Date) => new Date(now.getTime() + LEASE_MS);

/** Claims a due domain for one pass (a lease, so two workers never check the same domain at once). */
export async function leaseDueDomains(db: Knex, now: Date, limit: number): Promise<string[]> {
  const rows = await db('domains')
    .whereIn(
      'id',
      db('domains')
        .select('id')
        .where('next_check_at', '<=', now)
        .where({ managed: false })
        .orderBy('next_check_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .update({ next_check_at: leaseEnd(now) })
    .returning('id');
  return rows.map((r: { id: string }) => r.id);
}

export async function checkDomain(
  db: Knex,
  resolver: VerifyResolver,
  hosts: PlatformHosts,
  domainId: string,
  now = new Date(),
  leasedUntil?: Date,
): Promise<DomainRow | null> {
  const domain = await db<DomainRow>('domains').where({ id: domainId }).first();
  if (!domain || domain.managed) return null;
  const records = await recordsOf(db, domainId);
  const verdictOf = lookupsFor(resolver, domain.name);
  const verdicts = await Promise.all(records.map(verdictOf));

  return db.transaction(async (trx) => {
    const locked = await trx<DomainRow>('domains').where({ id: domainId }).forUpdate().first();
    if (!locked) return null;
    // A check that started after this one has written what it found (two sweeps overlap when a check is asked for
    // during one, and this one's lookups were slower): this one's answers are older and would undo it.
    if (locked.last_checked_at && locked.last_checked_at > now) return locked;
    const checkingSince = locked.checking_since ?? now;
    const keys = await publishedKeys(trx, domainId);
    let changed = false;
    let retrySoon = false;
    const statuses: RecordStatus[] = [];
    for (const [i, r] of records.entries()) {
      // A pending key's record (a rotation's, an Ed25519 key's) has its own 72 hours from when it was added, so a
      // key added to a domain verified long ago is `pending` while the customer publishes it, not `failed`.
      const pendingKey = keys.find(
        (k) => k.status === 'pending' && r.record === 'DKIM' && r.name === `${k.selector}._domainkey`,
      );
      const windowFrom = pendingKey ? pendingKey.created_at : checkingSince;
      const windowClosed = now.getTime() >= windowFrom.getTime() + CHECK_WINDOW_MS;
      // A record that was verified and is now gone failed: the customer removed it (noticed on a re-check).
      let status = recordStatus(verdicts[i], windowClosed);
      if (r.status === 'verified' && status === 'pending' && locked.status === 'verified') status = 'failed';
      // A lookup that failed for now (a timeout, SERVFAIL) says nothing about a record found before: it stays
      // verified, with what was found, and is looked at again within the hour (not the next day; hourly, not every
      // minute, while the customer's DNS keeps failing); it does not stop the domain's sends.
      const kept = r.status === 'verified' && verdicts[i].result === 'temporary';
      if (kept) {
        status = 'verified';
        retrySoon = true;
      }
      statuses.push(status);
      if (status !== r.status) changed = true;
      await trx('domain_records')
        .where({ id: r.id })
        .update({ status, ...(kept ? {} : { found: verdicts[i].found }), last_checked_at: now });
      r.status = status;
    }

    const activated = await rotateKeys(trx, keys, records, now);
    if (activated) {
      changed = true;
      await syncRecords(
        trx,
        locked,
        desiredRecords(locked, await publishedKeys(trx, domainId), hosts, await logoUrlOf(trx, domainId)),
      );
    }
    const liveKeys = await publishedKeys(trx, domainId);
    const current = await recordsOf(trx, domainId);
    const status = domainStatus(current.filter((r) => decidesStatus(r, liveKeys)).map((r) => r.status));
    const lostVerification = locked.status === 'verified' && status !== 'verified';
    const since = lostVerification ? now : checkingSince;
    const count = lostVerification ? 1 : locked.check_count + 1;
    const canSend = sendingRecordsVerified(
      { ...locked, status },
      current,
      liveKeys.filter((k) => k.status === 'active').map((k) => k.selector),
    );
    let next = nextCheckAt(status, since, count, now, canSend);
    if (retrySoon) {
      const soon = new Date(now.getTime() + RETRY_KEPT_MS);
      if (!next || soon < next) next = soon;
    }
    // A rotation's (or an Ed25519) new key is looked for every few minutes for as long as its pending window lasts.
    const rotating = liveKeys.some(
      (k) => k.status === 'pending' && now.getTime() < k.created_at.getTime() + CHECK_WINDOW_MS,
    );
    if (rotating) {
      const soon = new Date(now.getTime() + ROTATION_RECHECK_MS);
      if (!next || soon < next) next = soon;
    }
    // A check asked for while this one looked up the records (POST /domains/{id}/verify, auto-configure: the lease's
    // next_check_at moved earlier) may find what this one did not: it stays asked for.
    const asked =
      leasedUntil && locked.next_check_at && locked.next_check_at < leasedUntil ? locked.next_check_at : null;
    if (asked && (!next || asked < next)) next = asked;
    const [updated] = await trx<DomainRow>('domains')
      .where({ id: domainId })
      .update({
        status,
        last_checked_at: now,
        check_count: count,
        checking_since: since,
        next_check_at: next,
        verified_at: status === 'verified' ? (locked.verified_at ?? now) : locked.verified_at,
        updated_at: status !== locked.status ? now : locked.updated_at,
      })
      .returning('*');
    if (changed || status !== locked.status) {
      await recordEvent(trx, locked.team_id, 'domain.updated', domainEventData(updated, current));
    }
    return updated;
  });
}

/**
 * DKIM rotation: a pending key starts signing once its record verifies, and the key of its algorithm it replaces
 * (an RSA rotation never touches the Ed25519 key beside it, nor the other way round) keeps its record published
 * for DKIM_RETIRE_AFTER_MS so mail in flight still verifies; then it is retired. An active Ed25519 key whose
 * record no longer verifies goes back to pending: it is the optional second signature, so it stops signing
 * rather than take the domain's verification away (status.ts decidesStatus), and resumes once its record is back.
 */
async function rotateKeys(trx: Knex, keys: DkimKeyRow[], records: RecordRow[], now: Date): Promise<boolean> {
  let changed = false;
  const recordOf = (key: DkimKeyRow) =>
    records.find((r) => r.record === 'DKIM' && r.name === `${key.selector}._domainkey`);
  const lapsed = keys.filter(
    (k) => k.algorithm === 'ed25519' && k.status === 'active' && recordOf(k)?.status !== 'verified',
  );
  if (lapsed.length)
    await trx('dkim_keys')
      .whereIn(
        'id',
        lapsed.map((k) => k.id),
      )
      .update({ status: 'pending' });
  for (const key of keys.filter((k) => k.status === 'pending')) {
    if (recordOf(key)?.status !== 'verified') continue;
    await trx('dkim_keys')
      .where({ domain_id: key.domain_id, algorithm: key.algorithm, status: 'active' })
      .update({ status: 'retiring', retire_after: new Date(now.getTime() + DKIM_RETIRE_AFTER_MS) });
    await trx('dkim_keys').where({ id: key.id }).update({ status: 'active', activated_at: now });
    changed = true;
  }
  const expired = keys.filter((k) => k.status === 'retiring' && k.retire_after && k.retire_after <= now);
  if (expired.length) {
    await trx('dkim_keys')
      .whereIn(
        'id',
        expired.map((k) => k.id),
      )
      .update({ status: 'retired' });
    changed = true;
  }
  return changed;
}
