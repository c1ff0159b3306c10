// An email's last_event and status from its recipients: the one rule, used by the accept statement (an email's
// first state), the MTA's record stage (both its paths) and the inbound bounce reader (an asynchronous bounce or
// a complaint after delivery). SQL never restates it: a statement that cannot read the email first is handed
// the rule's answers as data (lastEventByCurrent).
import type { Knex } from 'knex';
import { lastEvents, type EmailRow, type LastEvent } from './present.ts';

/**
 * last_event of an email, from its recipients: the most significant state among them, in this order (most
 * significant last): suppressed < sent (handed to the MTA, still in flight) < delivered < delivery_delayed (a
 * recipient still late) < failed < bounced. An email sent to some recipients and not to others (suppressed) is
 * sent; a late recipient outranks delivered ones until it is delivered, and one bounce shows even when others
 * were delivered. Engagement that other areas record on the email (opened, clicked, complained) is kept unless a
 * delivery state outranks it: opened < clicked < failed < bounced < complained.
 */
export const LAST_EVENT_RANK: LastEvent[] = [
  'queued',
  'scheduled',
  'suppressed',
  'sent',
  'delivered',
  'delivery_delayed',
  'opened',
  'clicked',
  'failed',
  'bounced',
  'complained',
];
/** Events other areas record on an email, kept by lastEvent unless a delivery state outranks them. */
export const ENGAGEMENT_EVENTS: LastEvent[] = ['opened', 'clicked', 'complained'];
const ENGAGEMENT = new Set<string>(ENGAGEMENT_EVENTS);

export interface RecipientStatus {
  status: string;
  delay_notified: boolean;
}

export function recipientEvent(r: RecipientStatus): LastEvent | null {
  switch (r.status) {
    case 'delivered':
    case 'bounced':
    case 'failed':
    case 'suppressed':
      return r.status;
    case 'deferred':
      return r.delay_notified ? 'delivery_delayed' : 'sent';
    case 'queued':
      return 'sent';
    default:
      return null;
  }
}

export function lastEvent(current: LastEvent, recipients: RecipientStatus[]): LastEvent {
  const rank = (e: LastEvent) => LAST_EVENT_RANK.indexOf(e);
  const candidates = recipients.map(recipientEvent).filter((e): e is LastEvent => e !== null);
  if (ENGAGEMENT.has(current)) candidates.push(current);
  if (candidates.length === 0) return current;
  return candidates.reduce((best, e) => (rank(e) > rank(best) ? e : best));
}

/** A recipient the MTA will still try (queued, or deferred to a later attempt). */
export const isPending = (r: RecipientStatus) => r.status === 'queued' || r.status === 'deferred';

export type EmailState = Pick<EmailRow, 'last_event' | 'status'>;

/**
 * The email's state once its recipients are as given: last_event by lastEvent (`complained` when this change is
 * a complaint), and status `done` once no recipient is pending (else it stays as it is).
 */
export function emailState(current: EmailState, recipients: RecipientStatus[], complained = false): EmailState {
  return {
    last_event: lastEvent(complained ? 'complained' : current.last_event, recipients),
    status: recipients.some(isPending) ? current.status : 'done',
  };
}

/**
 * The rule's answer for every last_event the email may have now, for a statement that moves the recipients and
 * the email at once without reading the email first (the MTA's one-statement record): it looks its answer up.
 */
export function lastEventByCurrent(recipients: RecipientStatus[]): Record<LastEvent, LastEvent> {
  return Object.fromEntries(lastEvents.map((current) => [current, lastEvent(current, recipients)])) as Record<
    LastEvent,
    LastEvent
  >;
}

/** last_event and status from the recipients as they now are; `complained` when this change is a complaint. */
export async function refreshEmail(trx: Knex, emailId: string, now: Date, complained: boolean): Promise<void> {
  const email: EmailState = await trx('emails').where({ id: emailId }).first('last_event', 'status');
  const recipients: RecipientStatus[] = await trx('email_recipients')
    .where({ email_id: emailId })
    .select('status', 'delay_notified');
  await trx('emails')
    .where({ id: emailId })
    .update({ ...emailState(email, recipients, complained), updated_at: now });
}
