// Broadcasts in an MtaWorld: a sender team with contacts in a segment, the worker's fan-out run in this process
// (shared/broadcasts/fanout.ts, as worker/broadcasts.ts runs it), and the mta's deliver job on every email it made.
import type { MtaWorld } from './mta.ts';
import type { TestTeam } from './platform.ts';
import { senderTeam } from './topic-sends.ts';
import { createLogger } from '../../shared/logger.ts';
import { processDelivery } from '../../mta/delivery/job.ts';
import { runBroadcast, type FanoutDeps, type FanoutOutcome } from '../../shared/broadcasts/fanout.ts';

export interface Audience {
  team: TestTeam;
  from: string;
  segment: string;
}

export async function created(w: MtaWorld, team: TestTeam, path: string, body: unknown): Promise<string> {
  const res = await w.p.request('POST', path, { key: team.key, body });
  if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status} ${res.text}`);
  return res.body.id;
}

/** A sender team with a segment of `contacts` (created through the API, in the segment). */
export async function audience(w: MtaWorld, domain: string, contacts: Record<string, unknown>[]): Promise<Audience> {
  const { team, from } = await senderTeam(w, domain);
  const segment = await created(w, team, '/segments', { name: 'Readers' });
  for (const c of contacts) await created(w, team, '/contacts', { ...c, audience_id: segment });
  return { team, from, segment };
}

export function fanoutDeps(w: MtaWorld, options: Partial<FanoutDeps> = {}): FanoutDeps & { handed: string[] } {
  const handed: string[] = [];
  return {
    db: w.p.db,
    log: createLogger(w.p.config, 'worker'),
    enqueue: async (ids) => {
      handed.push(...ids);
    },
    secrets: w.deps.secrets,
    publicBaseUrl: w.p.config.PUBLIC_BASE_URL,
    batchSize: 2,
    leaseMs: 15_000,
    handed,
    ...options,
  };
}

/** Runs the fan-out of `id`, then delivers every email it handed over; the outcome and the email ids. */
export async function fanOutAndDeliver(
  w: MtaWorld,
  id: string,
  options: Partial<FanoutDeps> = {},
): Promise<{ outcome: FanoutOutcome; emails: string[] }> {
  const deps = fanoutDeps(w, options);
  const outcome = await runBroadcast(deps, id);
  for (const emailId of deps.handed) await processDelivery(w.deps, emailId);
  return { outcome, emails: deps.handed };
}
