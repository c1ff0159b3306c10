// Billable contacts (interface spec, Limits: Contacts): a team's contacts that are not `unsubscribed`, not
// suppressed (a row in suppressions for the address), and subscribed to at least one of the team's topics: an
// `opt_in` choice in topic_subscriptions, or no choice for a topic whose default_subscription is `opt_in`. Counted
// in PostgreSQL, in one statement of hash joins (a million contacts: about a second on a loaded 2-core machine).
// The peak of each period (a calendar month in UTC) is kept in team_contact_peaks, raised whenever a count is taken.
import type { Knex } from 'knex';

/**
 * The statement, for the whole team or only the addresses in `?::text[]` (lower case). Per address: any opt_in
 * choice, and how many opt_in-default topics it opted out of; subscribed when it has an opt_in or fewer opt-outs
 * than the team has opt_in-default topics (a contact that never subscribed: only by an opt_in of its own).
 */
function billableSql(among: boolean): string {
  const only = (column: string) => (among ? `and ${column} = any(:emails::text[])` : '');
  return `with t as (select id, default_subscription from topics where team_id = :team),
    d as (select count(*) filter (where default_subscription = 'opt_in') as n from t),
    ch as (select s.email, bool_or(s.subscription = 'opt_in') as any_in,
        count(*) filter (where s.subscription = 'opt_out' and t.default_subscription = 'opt_in') as outs
      from topic_subscriptions s join t on t.id = s.topic_id
      where s.team_id = :team ${only('s.email')} group by s.email),
    c as (select lower(email) as email, never_subscribed from contacts
      where team_id = :team and not unsubscribed ${only('lower(email)')})
    select c.email from c left join ch on ch.email = c.email
    where not exists (select 1 from suppressions s where s.team_id = :team and s.email = c.email)
    and (coalesce(ch.any_in, false) or (not c.never_subscribed and coalesce(ch.outs, 0) < (select n from d)))`;
}

/** How many billable contacts the team has now. */
export async function billableCount(db: Knex, teamId: string): Promise<number> {
  const { rows } = await db.raw(`select count(*)::int as n from (${billableSql(false)}) b`, { team: teamId });
  return rows[0].n;
}

/** Which of `emails` (any case) are billable contacts of the team, lower case. */
export async function billableAmong(db: Knex, teamId: string, emails: string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const lower = [...new Set(emails.map((e) => e.toLowerCase()))];
  const { rows } = await db.raw(billableSql(true), { team: teamId, emails: lower });
  return new Set(rows.map((r: { email: string }) => r.email));
}

/** The first day (UTC) of the period `now` is in: periods are calendar months. */
export function periodStart(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

/** Raises the period's peak to `count` if it is higher; answers the peak. */
export async function recordPeak(db: Knex, teamId: string, count: number, now = new Date()): Promise<number> {
  const { rows } = await db.raw(
    `insert into team_contact_peaks (team_id, period_start, peak) values (?, ?, ?)
    on conflict (team_id, period_start) do update
      set peak = greatest(team_contact_peaks.peak, excluded.peak),
        updated_at = case when excluded.peak > team_contact_peaks.peak then now() else team_contact_peaks.updated_at end
    returning peak`,
    [teamId, periodStart(now), count],
  );
  return rows[0].peak;
}

export interface ContactUsage {
  /** 0 means unlimited. */
  contacts_included: number;
  billable_contacts: number;
  peak_billable_contacts: number;
  /** The period's first day, `YYYY-MM-DD` (UTC). */
  period_start: string;
}

/** Counts the team's billable contacts now, records the peak, and answers both with the allowance. */
export async function contactUsage(db: Knex, teamId: string, now = new Date()): Promise<ContactUsage> {
  const billable = await billableCount(db, teamId);
  const peak = await recordPeak(db, teamId, billable, now);
  const team = await db('teams').where({ id: teamId }).first('contacts_included');
  return {
    contacts_included: team?.contacts_included ?? 0,
    billable_contacts: billable,
    peak_billable_contacts: peak,
    period_start: periodStart(now),
  };
}
