// Sends under a topic in an MtaWorld: a sender team out of the sandbox, topics and sends through the api (each
// send delivered at once by the mta's job), and the one-click List-Unsubscribe link its copies carry.
import type { MtaWorld } from './mta.ts';
import type { TestTeam } from './platform.ts';
import { processDelivery } from '../../mta/delivery/job.ts';
import { liftSandbox } from '../../shared/teams/teams.ts';

/** A team out of the sandbox with the verified sending domain `domainName`, and a From at it. */
export async function senderTeam(w: MtaWorld, domainName: string): Promise<{ team: TestTeam; from: string }> {
  const team = await w.p.createTeam();
  await liftSandbox(w.p.db, team.id, 'us-east-1');
  const domain = await w.sendingDomain(team, domainName);
  return { team, from: `News <news@${domain.name}>` };
}

export async function createTopic(w: MtaWorld, team: TestTeam, body: Record<string, unknown>): Promise<string> {
  const res = await w.p.request('POST', '/topics', { key: team.key, body });
  if (res.status !== 201) throw new Error(`POST /topics: ${res.status} ${res.text}`);
  return res.body.id;
}

/** POST /emails, then the mta's deliver job on it; the email id. */
export async function send(w: MtaWorld, team: TestTeam, body: Record<string, unknown>): Promise<string> {
  const res = await w.p.request('POST', '/emails', { key: team.key, body });
  if (res.status !== 200) throw new Error(`POST /emails: ${res.status} ${res.text}`);
  await processDelivery(w.deps, res.body.id);
  return res.body.id;
}

export const unfold = (raw: Buffer) => raw.toString().replace(/\r\n[ \t]+/g, ' ');
export const unsubscribeUrl = (raw: Buffer) => /^List-Unsubscribe: <([^>]+)>/m.exec(unfold(raw))?.[1];
export const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

/** What a mailbox provider's one-click sends (RFC 8058 §3.2): a form POST, here without even a User-Agent. */
export const oneClick = (w: MtaWorld, token: string) =>
  w.p.request('POST', `/unsubscribe/${token}`, {
    rawBody: 'List-Unsubscribe=One-Click',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    userAgent: null,
  });
