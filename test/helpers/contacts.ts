// What the contact tests share: creating the area's resources over the API and reading the events it recorded.
import type { Platform, TestTeam } from './platform.ts';

export async function created(p: Platform, team: TestTeam, path: string, body: unknown): Promise<string> {
  const res = await p.request('POST', path, { key: team.key, body });
  if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status} ${res.text}`);
  return res.body.id;
}

export const createContact = (p: Platform, team: TestTeam, body: Record<string, unknown>) =>
  created(p, team, '/contacts', body);
export const createSegment = (p: Platform, team: TestTeam, name = 'Segment') => created(p, team, '/segments', { name });
export const createTopic = (p: Platform, team: TestTeam, body: Record<string, unknown> = {}) =>
  created(p, team, '/topics', { name: 'News', default_subscription: 'opt_in', ...body });

export interface RecordedEvent {
  type: string;
  data: Record<string, unknown>;
}

/** The team's `contact.*` events, oldest first. */
export async function contactEvents(p: Platform, teamId: string): Promise<RecordedEvent[]> {
  return p
    .db('events')
    .where({ team_id: teamId })
    .where('type', 'like', 'contact.%')
    .orderBy('id')
    .select('type', 'data');
}
