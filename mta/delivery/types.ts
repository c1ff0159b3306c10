// The values the delivery stages hand each other.
import type { Verdict } from '../../shared/bounces/classify.ts';

/** An email_recipients row as leased by a job (job.ts); `leased_until` is the job's lease token. */
export interface LeasedRecipient {
  id: string;
  email_id: string;
  team_id: string;
  address: string;
  domain: string;
  kind: 'to' | 'cc' | 'bcc';
  status: 'queued' | 'deferred';
  attempts: number;
  first_deferred_at: Date | null;
  delay_notified: boolean;
}

/**
 * What happened to one recipient in one attempt: a classified answer (deliver, defer, bounce), or an end the
 * MTA decides itself (suppress: the simulator's suppressed@; fail: the email cannot be sent at all).
 */
export type Outcome = Omit<Verdict, 'action'> & {
  action: Verdict['action'] | 'suppress' | 'fail';
  /** From the simulator: no suppression is added, and a deferral notifies at once. */
  simulated?: boolean;
  /** The simulator's complained@: delivered, then a complaint. */
  complaint?: boolean;
  /** email.failed's `failed.reason`. */
  failReason?: string;
  /** email.suppressed's `suppressed`, when it is not the suppression list's (record.ts). */
  suppressed?: { type: string; reason: string; message: string; topic_id?: string };
};

/** One delivery_attempts row and the outcomes it produced. */
export interface Attempt {
  domain: string;
  mxHost: string | null;
  tls: boolean;
  transcript: string;
  startedAt: Date;
  durationMs: number;
  /** Recipients whose outcome involved no attempt (a simulated suppression) are left out of the row. */
  outcomes: { recipient: LeasedRecipient; outcome: Outcome }[];
}
