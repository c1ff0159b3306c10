// When a deferred recipient is tried again (CONTRACT, "Sending"): 1 m, 5 m, 15 m, 30 m, 1 h, 2 h after the
// 1st..6th deferral, then every 4 h, for up to 72 h from the first deferral. `email.delivery_delayed` is
// recorded once, at the first deferral that comes 15 minutes or more after the first one. An attempt that
// defers at or after the 72 h mark ends the recipient as bounced (a transient bounce, type Undetermined).
// Pure functions of the recipient's row and `now`, so tests move time by passing a later `now`.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Delay after the n-th deferral (index n-1); past the end, RETRY_EVERY_MS. */
export const RETRY_STEPS_MS = [1 * MINUTE, 5 * MINUTE, 15 * MINUTE, 30 * MINUTE, 1 * HOUR, 2 * HOUR] as const;
export const RETRY_EVERY_MS = 4 * HOUR;
export const GIVE_UP_AFTER_MS = 72 * HOUR;
export const DELAY_NOTICE_AFTER_MS = 15 * MINUTE;

export interface DeferralHistory {
  /** Attempts made before this one (every earlier attempt of a live recipient was a deferral). */
  attempts: number;
  first_deferred_at: Date | null;
  delay_notified: boolean;
}

export type DeferralDecision =
  /** Try again at `next_attempt_at`; `notify` = record email.delivery_delayed now. */
  | { expired: false; next_attempt_at: Date; first_deferred_at: Date; notify: boolean }
  /** 72 h of deferrals are over: the recipient ends here. */
  | { expired: true; first_deferred_at: Date };

export function retryDelayMs(deferrals: number): number {
  return RETRY_STEPS_MS[deferrals - 1] ?? RETRY_EVERY_MS;
}

/**
 * What a deferral at `now` means for a recipient with `history`. The retry after the last step is pulled in to
 * the 72 h mark itself, so the final try happens at 72 h and not up to 4 h later.
 */
export function decideDeferral(history: DeferralHistory, now: Date): DeferralDecision {
  const first = history.first_deferred_at ?? now;
  const giveUpAt = first.getTime() + GIVE_UP_AFTER_MS;
  if (now.getTime() >= giveUpAt) return { expired: true, first_deferred_at: first };
  const deferrals = history.attempts + 1;
  const next = Math.min(now.getTime() + retryDelayMs(deferrals), giveUpAt);
  const notify = !history.delay_notified && now.getTime() - first.getTime() >= DELAY_NOTICE_AFTER_MS;
  return { expired: false, next_attempt_at: new Date(next), first_deferred_at: first, notify };
}
