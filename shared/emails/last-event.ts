// An email's last_event and status from its recipients, recomputed by whoever moves a recipient: the MTA's
// record stage and the inbound bounce reader (an asynchronous bounce or a complaint after delivery).
import type { Knex } from 'knex';

/**
 * last_event of an email, from its recipients: the most significant state among them, in this order (most
 * significant last): sent (handed to the MTA, still in flight) < suppressed < delivered < delivery_delayed (a
 * recipient still late) < failed < bounced. A late recipient thus outranks delivered ones until it is delivered,
 * and one bounce shows even when others were delivered. Engagement that other areas record on the email
 * (opened, clicked, complained) is kept unless a delivery state outranks it: opened < clicked < failed < bounced
 * < complained.
 */
export const LAST_EVENT_RANK = ['queued', 'scheduled', 'sent', 'suppressed', 'delivered', 'delivery_delayed', 'opened', 'clicked', 'failed', 'bounced', 'complained'];
/** Events other areas record on an email, kept by lastEvent unless a delivery state outranks them. */
export const ENGAGEMENT_EVENTS = ['opened', 'clicked', 'complained'];
const ENGAGEMENT = new Set(ENGAGEMENT_EVENTS);

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

/** last_event and status from the recipients as they now are; `complained` when this change is a complaint. */
export async function refreshEmail(trx: Knex, emailId: string, now: Date, complained: boolean): Promise<void> {
  const email = await trx('emails').where({ id: emailId }).first('last_event', 'status');
  const recipients: { status: string; delay_notified: boolean }[] = await trx('email_recipients').where({ email_id: emailId }).select('status', 'delay_notified');
  const pending = recipients.some((r) => r.status === 'queued' || r.status === 'deferred');
  await trx('emails').where({ id: emailId }).update({
    last_event: lastEvent(complained ? 'complained' : email.last_event, recipients),
    status: pending ? email.status : 'done',
    updated_at: now,
  });
}
