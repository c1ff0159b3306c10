// What the segment filter tests share: a filter segment made over the API, and its members as the API answers them
// (the count of GET /segments/{id} and every page of GET /segments/{id}/contacts).
import type { Platform, TestTeam } from './platform.ts';

export async function filterSegment(p: Platform, team: TestTeam, filter: unknown, name = 'Filtered'): Promise<string> {
  const res = await p.request('POST', '/segments', { key: team.key, body: { name, filter } });
  if (res.status !== 201) throw new Error(`POST /segments ${JSON.stringify(filter)}: ${res.status} ${res.text}`);
  return res.body.id;
}

/** The segment's count and its members' addresses (every page, newest first as listed). */
export async function members(p: Platform, team: TestTeam, id: string): Promise<{ count: number; emails: string[] }> {
  const got = await p.request('GET', `/segments/${id}`, { key: team.key });
  if (got.status !== 200) throw new Error(`GET /segments/${id}: ${got.status} ${got.text}`);
  const emails: string[] = [];
  let after = '';
  for (;;) {
    const page = await p.request('GET', `/segments/${id}/contacts?limit=100${after}`, { key: team.key });
    if (page.status !== 200) throw new Error(`GET /segments/${id}/contacts: ${page.status} ${page.text}`);
    emails.push(...page.body.data.map((c: { email: string }) => c.email));
    if (!page.body.has_more) break;
    after = `&after=${page.body.data.at(-1).id}`;
  }
  return { count: got.body.count, emails };
}

/** The addresses a filter matches (a segment made for it), sorted; throws if the count disagrees with the list. */
export async function matching(p: Platform, team: TestTeam, filter: unknown): Promise<string[]> {
  const found = await members(p, team, await filterSegment(p, team, filter));
  if (found.count !== found.emails.length)
    throw new Error(`${JSON.stringify(filter)}: count ${found.count}, listed ${found.emails.length}`);
  return found.emails.sort();
}
