// The suppression tests' calls: an address suppressed by hand through the api, and a team's events of one type.
import type { Platform, TestTeam } from './platform.ts';

/** POST /suppressions, which must answer 201; the entry's id. */
export async function suppress(p: Platform, team: TestTeam, email: string): Promise<string> {
  const res = await p.request('POST', '/suppressions', { key: team.key, body: { email } });
  if (res.status !== 201) throw new Error(`POST /suppressions answered ${res.status} ${res.text}`);
  return res.body.id;
}

/** The team's events of `type`, oldest first. */
export const teamEvents = (p: Platform, team: TestTeam, type: string) =>
  p.db('events').where({ team_id: team.id, type }).orderBy('id');
