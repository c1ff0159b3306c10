// Record and domain statuses and the re-check schedule, from the verdicts of a check: pure.
import type { Verdict } from './verdicts.ts';

export type RecordStatus = 'not_started' | 'pending' | 'verified' | 'failed' | 'temporary_failure';
export type DomainStatus = 'not_started' | 'pending' | 'verified' | 'partially_verified' | 'partially_failed' | 'failed';

/** Pending domains are re-checked on this backoff (then hourly) for CHECK_WINDOW_MS, verified ones daily. */
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
export function nextCheckAt(status: DomainStatus, checkingSince: Date, count: number, now: Date): Date | null {
  if (status === 'verified') return new Date(now.getTime() + VERIFIED_RECHECK_MS);
  const closes = checkingSince.getTime() + CHECK_WINDOW_MS;
  if (now.getTime() >= closes) return null;
  const delay = PENDING_DELAYS_MS[Math.min(count - 1, PENDING_DELAYS_MS.length - 1)];
  // The last check lands exactly when the window closes, so a domain fails on time, not an hour late.
  return new Date(Math.min(now.getTime() + delay, closes));
}
