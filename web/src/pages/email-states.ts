// Each recipient's state from an email's events (GET /emails/{email_id}/events, oldest first): what the page shows
// in its recipients table. An event names the recipients it concerns in `to`; email.sent, email.scheduled and
// email.canceled concern the whole email (they name its To addresses only), so they move every recipient still
// waiting. A bounce, complaint, suppression or failure stays once seen (a later open does not undo it), and one that
// comes after the delivery (a DSN a day later) replaces `delivered`: a late bounce shows bounced.
import type { Schemas } from '../api/client';

export type EmailEvent = Schemas['EmailEvent'];

export type RecipientState =
  | 'queued'
  | 'scheduled'
  | 'canceled'
  | 'sent'
  | 'delayed'
  | 'delivered'
  | 'opened'
  | 'clicked'
  | 'bounced'
  | 'complained'
  | 'suppressed'
  | 'failed';

/** What a timeline entry and a state are called on the page. */
export const EVENT_LABELS: Record<EmailEvent['type'], RecipientState> = {
  'email.scheduled': 'scheduled',
  'email.sent': 'sent',
  'email.delivery_delayed': 'delayed',
  'email.delivered': 'delivered',
  'email.bounced': 'bounced',
  'email.complained': 'complained',
  'email.opened': 'opened',
  'email.clicked': 'clicked',
  'email.failed': 'failed',
  'email.suppressed': 'suppressed',
  'email.canceled': 'canceled',
};

/** States the email as a whole moves a recipient out of. */
const WAITING = new Set<RecipientState>(['queued', 'scheduled', 'sent']);
/** States nothing but another of them replaces. */
const FINAL = new Set<RecipientState>(['bounced', 'complained', 'suppressed', 'failed']);
/** The order a delivery goes through; a state never goes back down it. */
const RANK: Partial<Record<RecipientState, number>> = { sent: 1, delayed: 2, delivered: 3, opened: 4, clicked: 5 };

export interface Recipient {
  /** As the email names it (`Name <address>` or the address). */
  name: string;
  kind: 'to' | 'cc' | 'bcc';
  state: RecipientState;
  /** The event that set the state; null while nothing happened to it. */
  since: EmailEvent | null;
}

/** The address of `Name <address>` or of a bare address, lower-cased. */
export function addressOf(recipient: string): string {
  const angle = /<([^<>]*)>\s*$/.exec(recipient);
  return (angle ? angle[1] : recipient).trim().toLowerCase();
}

export function recipientStates(email: Pick<Schemas['Email'], 'to' | 'cc' | 'bcc'>, events: EmailEvent[]): Recipient[] {
  const recipients: Recipient[] = [
    ...email.to.map((name) => ({ name, kind: 'to' as const })),
    ...(email.cc ?? []).map((name) => ({ name, kind: 'cc' as const })),
    ...(email.bcc ?? []).map((name) => ({ name, kind: 'bcc' as const })),
  ].map((r) => ({ ...r, state: 'queued' as RecipientState, since: null as EmailEvent | null }));
  const byAddress = new Map<string, Recipient[]>();
  for (const r of recipients) byAddress.set(addressOf(r.name), [...(byAddress.get(addressOf(r.name)) ?? []), r]);
  for (const event of events) {
    const next = EVENT_LABELS[event.type];
    if (next === 'sent' || next === 'scheduled' || next === 'canceled') {
      for (const r of recipients)
        if (WAITING.has(r.state) && !(next === 'scheduled' && r.state === 'sent')) {
          r.state = next;
          r.since = event;
        }
      continue;
    }
    for (const address of event.to)
      for (const r of byAddress.get(addressOf(address)) ?? []) {
        const replaces = FINAL.has(next) || (!FINAL.has(r.state) && (RANK[next] ?? 0) >= (RANK[r.state] ?? 0));
        if (replaces) {
          r.state = next;
          r.since = event;
        }
      }
  }
  return recipients;
}

/**
 * Whether a recipient is on its way and may change any moment (the page keeps asking while one is). A scheduled
 * email waits for its time, maybe days: the page is not kept asking for it.
 */
export const pending = (state: RecipientState) => state === 'queued' || state === 'sent' || state === 'delayed';

/** The details an event carries, as one line: why it bounced, was suppressed or failed, the link clicked. */
export function eventDetail(e: EmailEvent): string {
  if (e.bounce)
    return [`${e.bounce.type} ${e.bounce.subType}: ${e.bounce.message}`, ...(e.bounce.diagnosticCode ?? [])].join(
      ' — ',
    );
  if (e.suppressed) return e.suppressed.message;
  if (e.failed) return e.failed.reason;
  if (e.click) return e.click.link;
  return '';
}
