// An import on a team with a contact allowance (shared/contacts/allowance.ts): which new addresses of a batch would
// be billable once written (not unsubscribed, not suppressed, subscribed to a topic by their existing choices, the
// import's topics and the topics' defaults), and which of those, in file order, are past the allowance. Runs under
// the allowance lock, so the count it starts from is the team's at this moment.
import type { Knex } from 'knex';
import { billableCount } from '../contacts/billable.ts';
import type { ImportedContact } from './rows.ts';
import type { ImportRow } from './store.ts';

/** The addresses (lower case) of `addresses` that are new, would be billable, and do not fit in the allowance. */
export async function newContactsBillable(
  trx: Knex,
  imp: ImportRow,
  addresses: { key: string; contact: ImportedContact }[],
  included: number,
): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const { rows } = await trx.raw(
    `select x.email from unnest(?::text[], ?::boolean[]) with ordinality as x(email, unsubscribed, n)
    where not exists (select 1 from contacts c where c.team_id = ? and lower(c.email) = x.email)
      and not coalesce(x.unsubscribed, false)
      and not exists (select 1 from suppressions s where s.team_id = ? and s.email = x.email)
      and exists (select 1 from topics t
        left join topic_subscriptions ts on ts.topic_id = t.id and ts.email = x.email
        left join unnest(?::uuid[], ?::text[]) as it(id, subscription) on it.id = t.id
        where t.team_id = ? and coalesce(it.subscription, ts.subscription, t.default_subscription) = 'opt_in')
    order by x.n`,
    [
      addresses.map((a) => a.key),
      addresses.map((a) => a.contact.unsubscribed === true || a.contact.never_subscribed === true) as never,
      imp.team_id,
      imp.team_id,
      imp.topics.map((t) => t.id),
      imp.topics.map((t) => t.subscription),
      imp.team_id,
    ],
  );
  if (rows.length === 0) return new Set();
  const room = Math.max(0, included - (await billableCount(trx, imp.team_id)));
  return new Set(rows.slice(room).map((r: { email: string }) => r.email));
}
