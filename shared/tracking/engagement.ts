// Recording opens and clicks: the one way a hit on a tracking host becomes data (docs/tracking.md). In the caller's
// transaction, for a batch of hits:
// 1. every hit that names a real recipient of an email of the hit's domain is an `email_engagements` row, with the
//    machine rule that caught it (the listener's by request: HEAD, user agent, Apple's proxies; here, by time: a hit
//    before the recipient's delivery was recorded or within TRACKING_MACHINE_WINDOW_SECONDS of it is a link
//    scanner's), or none: a person's. A token that names no recipient (deleted since) records nothing;
// 2. each recipient's first human open and first human click (email_recipient_engagement, one conditional write
//    each, so two batches never both take the first) fire `email.opened` / `email.clicked` and move the email's
//    last_event (last-event.ts: opened < clicked, below failed, bounced and complained);
// 3. every human open and click is counted for GET /emails/metrics (`opened`, `clicked`; the firsts are counted as
//    `unique_opened` / `unique_clicked` from their events by the rollup, rollup.ts), and noted as the address's last
//    open or click for segment filters (contact_activity, noteActivity).
// Machine hits are kept (flagged) and counted nowhere.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { eventRow, insertEvents, type EventRow } from '../events.ts';
import { emailEventData, type EmailRow } from '../emails/present.ts';
import { LAST_EVENT_RANK } from '../emails/last-event.ts';
import { addCounts } from '../email-metrics/counters.ts';
import { noteActivity } from '../contacts/activity.ts';
import type { TrackingKind } from './tokens.ts';
import { prepared } from '../db/prepared.ts';

export interface Hit {
  kind: TrackingKind;
  recipientId: string;
  domainId: string;
  teamId: string;
  /** Clicks: the link's position among the message's tracked links, and its URL. */
  linkIndex: number | null;
  url: string | null;
  at: Date;
  userAgent: string;
  /** As TRACKING_IP_ADDRESSES keeps it (ip.ts). */
  ip: string | null;
  /** The listener's verdict (machine.ts): the rule that took it for a machine's, or null. */
  machine: string | null;
}

/** One recorded hit, as the engagement row has it. */
export interface Engagement {
  id: string;
  team_id: string;
  email_id: string;
  recipient_id: string;
  domain_id: string;
  kind: TrackingKind;
  link_index: number | null;
  link: string | null;
  user_agent: string;
  ip: string | null;
  machine: string | null;
  created_at: Date;
}

export interface Recorded {
  recorded: number;
  human: number;
  /** Events fired: first human opens and clicks. */
  events: number;
}

const INSERT_SQL = `with h as (
    select * from json_to_recordset(?::json) as h(id uuid, team_id uuid, recipient_id uuid, domain_id uuid, kind text,
      link_index int, link text, user_agent text, ip text, machine text, created_at timestamptz))
  , written as (insert into email_engagements (id, team_id, email_id, recipient_id, domain_id, kind, link_index, link, user_agent, ip, machine, created_at)
  select h.id, h.team_id, r.email_id, h.recipient_id, h.domain_id, h.kind, h.link_index, h.link, h.user_agent, h.ip,
    coalesce(h.machine, case when r.delivered_at is null then 'before_delivery'
      when h.created_at < r.delivered_at + make_interval(secs => ?) then 'delivery_window' end),
    h.created_at
  from h join email_recipients r on r.id = h.recipient_id and r.team_id = h.team_id
    join emails e on e.id = r.email_id and e.team_id = h.team_id and e.domain_id = h.domain_id
  returning id, email_id, recipient_id, machine)
  select w.id, w.email_id, w.machine, r.address, (select e.broadcast_id from emails e where e.id = w.email_id) as broadcast_id
  from written w join email_recipients r on r.id = w.recipient_id`;

/** The first human open (or click) of each recipient, taken by one conditional write: the ids it was first for. */
const firstSql = (column: 'first_opened_at' | 'first_clicked_at') => `insert into email_recipient_engagement as x
    (recipient_id, team_id, email_id, ${column})
  select recipient_id, team_id, email_id, at from json_to_recordset(?::json) as f(recipient_id uuid, team_id uuid, email_id uuid, at timestamptz)
  order by recipient_id
  on conflict (recipient_id) do update set ${column} = excluded.${column} where x.${column} is null
  returning recipient_id`;

const below = (event: 'opened' | 'clicked') => LAST_EVENT_RANK.slice(0, LAST_EVENT_RANK.indexOf(event));

/** The earliest hit of each recipient among `rows`. */
function earliest(rows: Engagement[]): Engagement[] {
  const first = new Map<string, Engagement>();
  for (const r of rows) {
    const seen = first.get(r.recipient_id);
    if (!seen || r.created_at < seen.created_at) first.set(r.recipient_id, r);
  }
  return [...first.values()];
}

async function firsts(trx: Knex, kind: TrackingKind, human: Engagement[]): Promise<Engagement[]> {
  const candidates = earliest(human.filter((r) => r.kind === kind));
  if (candidates.length === 0) return [];
  const column = kind === 'open' ? 'first_opened_at' : 'first_clicked_at';
  const rows = await prepared<{ recipient_id: string }>(trx, `pw_engagement_${column}`, firstSql(column), [
    JSON.stringify(
      candidates.map((c) => ({
        recipient_id: c.recipient_id,
        team_id: c.team_id,
        email_id: c.email_id,
        at: c.created_at,
      })),
    ),
  ]);
  const won = new Set(rows.map((r) => r.recipient_id));
  return candidates.filter((c) => won.has(c.recipient_id));
}

const FIRST_EMAILS_SQL = `select r.id as recipient_id, r.address, e.id, e.team_id, e.created_at, e."from", e."to",
    e.subject, e.message_id, e.tags
  from email_recipients r join emails e on e.id = r.email_id where r.id = any(?::uuid[])`;

/** email.opened / email.clicked for the firsts: the email's data, `to` the recipient, a click's `click` details. */
async function firstEvents(trx: Knex, opens: Engagement[], clicks: Engagement[]): Promise<EventRow[]> {
  const ids = [...opens, ...clicks].map((e) => e.recipient_id);
  if (ids.length === 0) return [];
  type Row = EmailRow & { recipient_id: string; address: string };
  const rows = await prepared<Row>(trx, 'pw_engagement_first_emails', FIRST_EMAILS_SQL, [ids]);
  const byRecipient = new Map<string, Row>(rows.map((r) => [r.recipient_id, r]));
  const events: EventRow[] = [];
  for (const o of opens) {
    const email = byRecipient.get(o.recipient_id);
    if (email) events.push(eventRow(o.team_id, 'email.opened', emailEventData(email, { to: [email.address] })));
  }
  for (const c of clicks) {
    const email = byRecipient.get(c.recipient_id);
    if (!email) continue;
    const click = {
      ipAddress: c.ip ?? '',
      link: c.link,
      timestamp: c.created_at.toISOString(),
      userAgent: c.user_agent,
    };
    events.push(eventRow(c.team_id, 'email.clicked', emailEventData(email, { to: [email.address], click })));
  }
  return events;
}

const RAISE_LAST_EVENT_SQL = `update emails set last_event = ?, updated_at = ? where id in (
    select id from emails where id = any(?::uuid[]) and last_event = any(?::text[]) order by id for update)`;

/** last_event moves up to opened / clicked where it ranks below (in id order, as the mta locks emails). */
async function raiseLastEvent(trx: Knex, event: 'opened' | 'clicked', firsts: Engagement[], now: Date) {
  const ids = [...new Set(firsts.map((f) => f.email_id))];
  if (ids.length === 0) return;
  await prepared(trx, 'pw_engagement_last_event', RAISE_LAST_EVENT_SQL, [event, now, ids, below(event)]);
}

/**
 * Records `hits` in `trx` (see the top of this file). Every human open and click goes through here, and only here:
 * whatever else must know of them (segment filters on recent activity) is called from this function.
 */
export async function recordEngagement(
  trx: Knex,
  hits: Hit[],
  options: { machineWindowSeconds: number; now?: Date },
): Promise<Recorded> {
  if (hits.length === 0) return { recorded: 0, human: 0, events: 0 };
  const rows = hits.map((h) => ({
    id: newId(),
    team_id: h.teamId,
    recipient_id: h.recipientId,
    domain_id: h.domainId,
    kind: h.kind,
    link_index: h.linkIndex,
    link: h.url,
    user_agent: h.userAgent,
    ip: h.ip,
    machine: h.machine,
    created_at: h.at,
  }));
  const written = await prepared<
    Pick<Engagement, 'id' | 'email_id' | 'machine'> & { address: string; broadcast_id: string | null }
  >(trx, 'pw_engagement_insert', INSERT_SQL, [JSON.stringify(rows), options.machineWindowSeconds]);
  // What was written is what was given, with the recipient's email and the machine verdict the statement added.
  const given = new Map(rows.map((r) => [r.id, r]));
  const recorded: (Engagement & { address: string; broadcast_id: string | null })[] = written.map((w) => ({
    ...given.get(w.id)!,
    email_id: w.email_id,
    machine: w.machine,
    address: w.address,
    broadcast_id: w.broadcast_id,
  }));
  const human = recorded.filter((r) => r.machine === null);
  const opens = await firsts(trx, 'open', human);
  const clicks = await firsts(trx, 'click', human);
  const events = await firstEvents(trx, opens, clicks);
  if (events.length) await insertEvents(trx, events);
  const now = options.now ?? new Date();
  await raiseLastEvent(trx, 'opened', opens, now);
  await raiseLastEvent(trx, 'clicked', clicks, now);
  await addCounts(
    trx,
    human.map((r) => ({
      team_id: r.team_id,
      at: r.created_at,
      domain_id: r.domain_id,
      broadcast_id: r.broadcast_id,
      email_id: r.email_id,
      counts: r.kind === 'open' ? { opened: 1 } : { clicked: 1 },
    })),
  );
  // What segment filters on recent activity read ("opened in the last N days", shared/contacts/activity.ts).
  await noteActivity(
    trx,
    human.map((r) => ({
      teamId: r.team_id,
      address: r.address,
      kind: r.kind === 'open' ? 'opened' : 'clicked',
      at: r.created_at,
    })),
  );
  return { recorded: recorded.length, human: human.length, events: events.length };
}
