// Pure decisions of the record stage: a recipient's next row state after an outcome, the events it records,
// and the email's last_event from its recipients.
import { decideDeferral } from './schedule.ts';
import type { BounceSubType, BounceType } from './bounce-rules.ts';
import type { LeasedRecipient, Outcome } from './types.ts';

export type RecipientEvent = 'delivered' | 'bounced' | 'delivery_delayed' | 'suppressed' | 'failed' | 'complained';

export interface NextState {
  columns: {
    status: 'delivered' | 'deferred' | 'bounced' | 'suppressed' | 'failed';
    last_response: string;
    enhanced_code: string | null;
    next_attempt_at: Date | null;
    first_deferred_at?: Date;
    delay_notified?: boolean;
    delivered_at?: Date;
    bounce_type?: BounceType;
    bounce_sub_type?: BounceSubType;
  };
  events: RecipientEvent[];
  bounce?: { type: BounceType; subType: BounceSubType; message: string; diagnosticCode: string[] };
  failed?: { reason: string };
  /** A hard bounce: the address joins the team's suppression list. */
  suppress: boolean;
  /** delivery_attempts.outcome of this recipient. */
  attempt: 'delivered' | 'deferred' | 'bounced' | null;
}

const bounceMessages: Record<string, string> = {
  'Permanent/NoEmail': "The recipient's mail server says the address does not exist.",
  'Permanent/General': "The recipient's mail server permanently rejected the email.",
  'Transient/MailboxFull': "The recipient's mailbox is full.",
  'Transient/MessageTooLarge': "The email is larger than the recipient's mail server accepts.",
  'Transient/ContentRejected': "The recipient's mail server rejected the content of the email.",
  'Transient/AttachmentRejected': "The recipient's mail server rejected an attachment of the email.",
  'Transient/General': "The recipient's mail server refused the email for a reason that is not the address (such as the sender's reputation).",
  'Undetermined/Undetermined': 'The email could not be delivered, and the reason could not be determined.',
};

function bounced(o: Outcome, type: BounceType, subType: BounceSubType, message?: string): NextState {
  return {
    columns: { status: 'bounced', last_response: o.response, enhanced_code: o.enhanced, next_attempt_at: null, bounce_type: type, bounce_sub_type: subType },
    events: ['bounced'],
    bounce: { type, subType, message: message ?? bounceMessages[`${type}/${subType}`] ?? bounceMessages['Undetermined/Undetermined'], diagnosticCode: [`smtp; ${o.response}`] },
    suppress: type === 'Permanent' && !o.simulated,
    attempt: 'bounced',
  };
}

export function nextState(r: LeasedRecipient, o: Outcome, now: Date): NextState {
  const base = { last_response: o.response, enhanced_code: o.enhanced };
  switch (o.action) {
    case 'deliver':
      return { columns: { ...base, status: 'delivered', next_attempt_at: null, delivered_at: now }, events: o.complaint ? ['delivered', 'complained'] : ['delivered'], suppress: false, attempt: 'delivered' };
    case 'bounce':
      return bounced(o, o.bounce?.type ?? 'Undetermined', o.bounce?.subType ?? 'Undetermined');
    case 'suppress':
      return { columns: { ...base, status: 'suppressed', next_attempt_at: null }, events: ['suppressed'], suppress: false, attempt: null };
    case 'fail':
      return { columns: { ...base, status: 'failed', next_attempt_at: null }, events: ['failed'], failed: { reason: o.failReason ?? 'delivery_failed' }, suppress: false, attempt: null };
    case 'defer': {
      const d = decideDeferral(r, now);
      if (d.expired) {
        // Our own error for 72 h is no bounce of the recipient's: the email failed.
        if (o.rule === 'local-error') {
          return { columns: { ...base, status: 'failed', next_attempt_at: null }, events: ['failed'], failed: { reason: 'delivery_failed' }, suppress: false, attempt: 'deferred' };
        }
        return bounced(o, 'Undetermined', 'Undetermined', `Delivery was retried for 72 hours without success; the last answer was temporary.`);
      }
      // The simulator's delayed@ shows its delay at once instead of after 15 minutes.
      const notify = d.notify || (!!o.simulated && !r.delay_notified);
      return {
        columns: { ...base, status: 'deferred', next_attempt_at: d.next_attempt_at, first_deferred_at: d.first_deferred_at, delay_notified: r.delay_notified || notify },
        events: notify ? ['delivery_delayed'] : [],
        suppress: false,
        attempt: 'deferred',
      };
    }
  }
}

/**
 * last_event of an email, from its recipients: the most significant state among them, in this order (most
 * significant last): sent (handed to the MTA, still in flight) < suppressed < delivered < delivery_delayed (a
 * recipient still late) < failed < bounced. A late recipient thus outranks delivered ones until it is delivered,
 * and one bounce shows even when others were delivered. Engagement that other areas record on the email
 * (opened, clicked, complained) is kept unless a delivery state outranks it: opened < clicked < failed < bounced
 * < complained.
 */
export const LAST_EVENT_RANK = ['queued', 'scheduled', 'sent', 'suppressed', 'delivered', 'delivery_delayed', 'opened', 'clicked', 'failed', 'bounced', 'complained'];
const ENGAGEMENT = new Set(['opened', 'clicked', 'complained']);

export function recipientEvent(r: { status: string; delay_notified: boolean }): string | null {
  switch (r.status) {
    case 'delivered': case 'bounced': case 'failed': case 'suppressed':
      return r.status;
    case 'deferred':
      return r.delay_notified ? 'delivery_delayed' : 'sent';
    case 'queued':
      return 'sent';
    default:
      return null;
  }
}

export function lastEvent(current: string, recipients: { status: string; delay_notified: boolean }[]): string {
  const rank = (e: string) => LAST_EVENT_RANK.indexOf(e);
  const candidates = recipients.map(recipientEvent).filter((e): e is string => e !== null);
  if (ENGAGEMENT.has(current)) candidates.push(current);
  if (candidates.length === 0) return current;
  return candidates.reduce((best, e) => (rank(e) > rank(best) ? e : best));
}
