// Record and domain statuses and the re-check schedule, from the verdicts of a check: pure.
import type { Verdict } from './verdicts.ts';

export type RecordStatus = 'not_started' | 'pending' | 'verified' | 'failed' | 'temporary_failure';
export type DomainStatus =
  'not_started' | 'pending' | 'verified' | 'partially_verified' | 'partially_failed' | 'failed';

/**
 * Pending domains are re-checked on this backoff (then hourly) for CHECK_WINDOW_MS, verified ones (and ones that can
 * send) daily.
 */
export const PENDING_DELAYS_MS = [60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000];
export const CHECK_WINDOW_MS = 72 * 3600_000;
export const VERIFIED_RECHECK_MS = 24 * 3600_000;

/** Missing or wrong is `pending` while the checking window is open and `failed` once it has closed. */
export function recordStatus(verdict: Verdict, windowClosed: boolean): RecordStatus {
  if (verdict.result === 'verified') return 'verified';
  if (verdict.result === 'temporary') return windowClosed ? 'failed' : 'temporary_failure';
  return windowClosed ? 'failed' : 'pending';
}

export function domainStatus(records: RecordStatus[]): DomainStatus {
  if (records.length === 0) return 'verified';
  const verified = records.filter((s) => s === 'verified').length;
  const failed = records.filter((s) => s === 'failed').length;
  if (verified === records.length) return 'verified';
  if (records.every((s) => s === 'not_started')) return 'not_started';
  if (verified > 0) return failed > 0 ? 'partially_failed' : 'partially_verified';
  return failed > 0 ? 'failed' : 'pending';
}

/** When to look again after check number `count` (1-based); null = stop until someone asks (POST verify). */
export function nextCheckAt(
  status: DomainStatus,
  checkingSince: Date,
  count: number,
  now: Date,
  canSend = false,
): Date | null {
  if (status === 'verified') return new Date(now.getTime() + VERIFIED_RECHECK_MS);
  const closes = checkingSince.getTime() + CHECK_WINDOW_MS;
  // A domain that sends on its verified SPF and DKIM records (its tracking or receiving ones still missing) is
  // watched daily like a verified one once its window has closed, so a sending record it loses is noticed.
  if (now.getTime() >= closes) return canSend ? new Date(now.getTime() + VERIFIED_RECHECK_MS) : null;
  const delay = PENDING_DELAYS_MS[Math.min(count - 1, PENDING_DELAYS_MS.length - 1)];
  // The last check lands exactly when the window closes, so a domain fails on time, not an hour late.
  return new Date(Math.min(now.getTime() + delay, closes));
}

/**
 * Whether a record decides the domain's status. The optional BIMI record does not (a brand logo never takes a
 * domain's verification, and so its sending, away); a DKIM record does only for the active RSA key: a rotation's
 * new or retiring key does not, and neither does an Ed25519 key (RFC 8463), the second signature an operator may
 * add (ed25519.ts): it signs only while its record verifies, so a missing one costs that signature and nothing else.
 */
export function decidesStatus(
  r: { record: string; name: string },
  keys: { selector: string; algorithm: string; status: string }[],
): boolean {
  if (r.record === 'BIMI') return false;
  if (r.record !== 'DKIM') return true;
  const key = keys.find((k) => r.name === `${k.selector}._domainkey`);
  return key?.status === 'active' && key.algorithm === 'rsa';
}

/** A record of the sender's domain as the send check reads it (domain_records). */
export interface SendingRecord {
  record: string;
  name: string;
  type: string;
  status: string;
}

/**
 * Whether the records sending needs are verified: the return-path MX and SPF TXT at `custom_return_path` and the DKIM
 * record of every active (signing) key (CONTRACT, "DNS records of a domain"). Receiving, Tracking, TrackingCAA and BIMI
 * records never decide it, nor does a rotation's pending or retiring key, nor a pending Ed25519 one (an active Ed25519
 * key's record is verified: verify.ts takes the key back to pending otherwise). A domain whose status is `verified`
 * passes: that status counts every one of these records (verify.ts counts()), and the managed domain, which publishes
 * nothing of its own, is verified by the platform.
 */
export function sendingRecordsVerified(
  domain: { status: DomainStatus; managed: boolean; custom_return_path: string },
  records: SendingRecord[],
  signingSelectors: string[],
): boolean {
  if (domain.status === 'verified') return true;
  if (domain.managed || signingSelectors.length === 0) return false;
  const needed = [
    { record: 'SPF', type: 'MX', name: domain.custom_return_path },
    { record: 'SPF', type: 'TXT', name: domain.custom_return_path },
    ...signingSelectors.map((s) => ({ record: 'DKIM', type: 'TXT', name: `${s}._domainkey` })),
  ];
  return needed.every((n) => {
    const rows = records.filter((r) => r.record === n.record && r.type === n.type && r.name === n.name);
    return rows.length > 0 && rows.every((r) => r.status === 'verified');
  });
}
