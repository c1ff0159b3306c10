// What an address last did with a team's mail (contact_activity: delivered, opened, clicked), which the segment
// filter's engagement conditions read. Written where the event is recorded, in the same transaction: the mta's
// record of delivered recipients (mta/delivery/record.ts puts ACTIVITY_UPSERT in its own statement), open and
// click tracking through noteActivity. Times only move forward, so a late or repeated record changes nothing.
import type { Knex } from 'knex';
import { canonicalAddress } from '../suppressions/suppressions.ts';
import { prepared } from '../db/prepared.ts';

export type ActivityKind = 'delivered' | 'opened' | 'clicked';

export interface Activity {
  teamId: string;
  /** Any case: kept lower case, as topic choices and suppressions are. */
  address: string;
  kind: ActivityKind;
  at: Date;
}

interface ActivityRecord {
  team_id: string;
  address: string;
  delivered_at: Date | null;
  opened_at: Date | null;
  clicked_at: Date | null;
}

const column = { delivered: 'delivered_at', opened: 'opened_at', clicked: 'clicked_at' } as const;

/**
 * The rows as ACTIVITY_UPSERT's one parameter: one per team and address (a statement may not update a row twice),
 * each kind's latest time, in key order (two transactions lock the rows they share in the same order).
 */
export function activityParameter(rows: Activity[]): string {
  const byKey = new Map<string, ActivityRecord>();
  for (const r of rows) {
    const address = canonicalAddress(r.address);
    const key = `${r.teamId} ${address}`;
    const record = byKey.get(key) ?? {
      team_id: r.teamId,
      address,
      delivered_at: null,
      opened_at: null,
      clicked_at: null,
    };
    const previous = record[column[r.kind]];
    if (!previous || previous < r.at) record[column[r.kind]] = r.at;
    byKey.set(key, record);
  }
  return JSON.stringify([...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r));
}

/**
 * The upsert, one `?` (activityParameter); `where` may hold it back (the mta's one-statement record writes it only
 * if the recipient moved). greatest() skips nulls, so a kind a row does not carry keeps its time.
 */
export const activityUpsert = (where = '') => `insert into contact_activity as a
    (team_id, address, last_delivered_at, last_opened_at, last_clicked_at)
  select v.team_id, v.address, v.delivered_at, v.opened_at, v.clicked_at
  from jsonb_to_recordset(?::jsonb) as v(team_id uuid, address text, delivered_at timestamptz, opened_at timestamptz,
    clicked_at timestamptz)${where}
  order by v.team_id, v.address
  on conflict (team_id, address) do update set
    last_delivered_at = greatest(a.last_delivered_at, excluded.last_delivered_at),
    last_opened_at = greatest(a.last_opened_at, excluded.last_opened_at),
    last_clicked_at = greatest(a.last_clicked_at, excluded.last_clicked_at)`;

const NOTE_SQL = activityUpsert();

/** Records activity in the caller's transaction (open and click tracking: `opened`, `clicked`). */
export async function noteActivity(trx: Knex, rows: Activity[]): Promise<void> {
  if (rows.length === 0) return;
  await prepared(trx, 'pw_activity_note', NOTE_SQL, [activityParameter(rows)]);
}
