// The audience the segments suite filters (bench/segments.ts): one team with N contacts, their property values,
// topic choices and engagement, written by generate_series in a handful of statements (about a minute for a
// million on the bench machine), then VACUUM ANALYZE so the planner sees the tables as a running system would.
//
// Contact g (1..N): address user<g>@d<g mod 100>.bench.test; first name one of five; unsubscribed when g mod 50 = 0;
// properties none when g mod 7 = 0, else plan (free, trial, pro, team by g mod 4), seats (g mod 50), vip (g mod 10
// = 0); created evenly over the last two years in id order (ids are UUID v7-shaped, older than any made later).
// Topic choices: every third address, alternately for News (default opt_in) and Offers (default opt_out), a third
// of them opt_out. Activity: 4 addresses in 5 received mail in the last 90 days; a third of those opened in the
// last 60 days, one in twelve clicked in the last 45.
import type { Knex } from 'knex';
import { newId } from '../shared/ids.ts';

export interface SeededAudience {
  topics: { news: string; offers: string };
  /** Seconds each step took. */
  timings: [string, number][];
}

const uuidOf = (g: string, base: number) =>
  `(lpad(to_hex(${base}::bigint + ${g}), 12, '0') || '7000' || '8' || lpad(to_hex(${g}), 15, '0'))::uuid`;
const addressOf = (g: string) => `'user' || ${g} || '@d' || (${g} % 100) || '.bench.test'`;

export async function seedAudience(db: Knex, teamId: string, contacts: number): Promise<SeededAudience> {
  const timings: [string, number][] = [];
  const step = async (name: string, work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    timings.push([name, (performance.now() - started) / 1000]);
  };
  // Ids from a millisecond clock that ends before now: every id made later (newId) sorts after them.
  const base = Date.now() - contacts - 60_000;
  await step('contact properties and topics', () =>
    db('contact_properties').insert(
      (
        [
          ['plan', 'string'],
          ['seats', 'number'],
          ['vip', 'boolean'],
        ] as const
      ).map(([key, type]) => ({ id: newId(), team_id: teamId, key, type })),
    ),
  );
  const topics = { news: newId(), offers: newId() };
  await db('topics').insert([
    { id: topics.news, team_id: teamId, name: 'News', default_subscription: 'opt_in' },
    { id: topics.offers, team_id: teamId, name: 'Offers', default_subscription: 'opt_out' },
  ]);
  await step(`${contacts} contacts`, () =>
    db.raw(
      `insert into contacts (id, team_id, email, first_name, last_name, unsubscribed, properties, created_at, updated_at)
      select ${uuidOf('g', base)}, ?, ${addressOf('g')}, (array['Ada','Bob','Cy','Dee','Eve'])[g % 5 + 1], 'Last' || (g % 1000),
        g % 50 = 0,
        case when g % 7 = 0 then '{}'::jsonb
          else jsonb_build_object('plan', (array['free','trial','pro','team'])[g % 4 + 1], 'seats', g % 50, 'vip', g % 10 = 0) end,
        now() - interval '730 days' + g * (interval '730 days' / ?), now()
      from generate_series(1, ?) g`,
      [teamId, contacts, contacts],
    ),
  );
  await step('topic choices', () =>
    db.raw(
      `insert into topic_subscriptions (topic_id, team_id, email, subscription)
      select case when g % 2 = 0 then ?::uuid else ?::uuid end, ?, ${addressOf('g')},
        case when g % 9 = 0 then 'opt_out' else 'opt_in' end
      from generate_series(1, ?, 3) g`,
      [topics.news, topics.offers, teamId, contacts],
    ),
  );
  await step('activity', () =>
    db.raw(
      `insert into contact_activity (team_id, address, last_delivered_at, last_opened_at, last_clicked_at)
      select ?, ${addressOf('g')}, now() - (g % 90) * interval '1 day',
        case when g % 3 = 0 then now() - (g % 60) * interval '1 day' end,
        case when g % 12 = 0 then now() - (g % 45) * interval '1 day' end
      from generate_series(1, ?) g where g % 5 <> 0`,
      [teamId, contacts],
    ),
  );
  await step('vacuum analyze', () =>
    db.raw('vacuum analyze contacts, contact_activity, topic_subscriptions, contact_segments'),
  );
  return { topics, timings };
}

/** Every `every`-th contact of the team (id order) added to the segment by hand. */
export async function addHandMembers(db: Knex, teamId: string, segmentId: string, every: number): Promise<number> {
  const { rowCount } = await db.raw(
    `insert into contact_segments (segment_id, contact_id, team_id)
    select ?, id, team_id from (select id, team_id, row_number() over (order by id) as n from contacts where team_id = ?) c
    where n % ? = 0`,
    [segmentId, teamId, every],
  );
  await db.raw('analyze contact_segments');
  return rowCount ?? 0;
}
