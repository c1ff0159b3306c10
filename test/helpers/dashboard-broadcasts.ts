// The world of the dashboard's broadcast tests: the real api (the MtaWorld's, which serves the dashboard), the worker
// and the mta as their own processes (as production starts them), the loopback DNS and SMTP sink; a sender team with
// a verified domain, a segment of contacts over two recipient domains, an admin and a viewer signed in, and Chromium.
import type { Browser } from 'playwright-core';
import { newId } from '../../shared/ids.ts';
import { liftSandbox } from '../../shared/teams/teams.ts';
import { launchChromium } from './browser.ts';
import { buildDashboard } from './dashboard.ts';
import { person, type Person } from './dashboard-ops.ts';
import { startMtaWorld, type MtaWorld } from './mta.ts';
import { Children } from './processes.ts';
import { verifiedDomain } from './sending.ts';

export const DOMAINS = ['db-one.test', 'db-two.test'];

export interface BroadcastsWorld {
  w: MtaWorld;
  browser: Browser;
  teamId: string;
  from: string;
  segment: { id: string; name: string };
  readers: { id: string; email: string; first_name: string }[];
  owner: Person & { email: string };
  viewer: Person & { email: string };
  close(): Promise<void>;
}

export async function startBroadcastsWorld(readerCount: number): Promise<BroadcastsWorld> {
  await buildDashboard();
  const w = await startMtaWorld();
  const children = new Children();
  try {
    const team = await w.p.createTeam('Broadcasts team');
    await liftSandbox(w.p.db, team.id, 'us-east-1');
    await verifiedDomain(w.p, w.dns, team, 'db-news.test');
    for (const d of DOMAINS) w.mx(d);
    const segment = { id: newId(), name: 'Readers <b>bold</b>' };
    await w.p.db('segments').insert({ id: segment.id, team_id: team.id, name: segment.name });
    const readers = Array.from({ length: readerCount }, (_, i) => ({
      id: newId(),
      email: `reader${i}@${DOMAINS[i % DOMAINS.length]}`,
      first_name: `Reader${i}`,
    }));
    await w.p.db('contacts').insert(readers.map((r) => ({ ...r, team_id: team.id })));
    await w.p
      .db('contact_segments')
      .insert(readers.map((r) => ({ segment_id: segment.id, contact_id: r.id, team_id: team.id })));
    const tag = newId().slice(0, 8);
    const ownerEmail = `owner-${tag}@people.test`;
    const viewerEmail = `viewer-${tag}@people.test`;
    const owner = await person(w.p, ownerEmail, { teamId: team.id, role: 'admin' });
    const viewer = await person(w.p, viewerEmail, { teamId: team.id, role: 'viewer' });
    const env = { PUBLIC_BASE_URL: w.p.url };
    children.start('worker/main.ts', w.p.config, { ...env, BROADCAST_BATCH_SIZE: '2' });
    children.start('mta/main.ts', w.p.config, { ...env, MTA_CONCURRENCY: '4', MTA_BULK_CONCURRENCY: '2' });
    const browser = await launchChromium();
    return {
      w,
      browser,
      teamId: team.id,
      from: 'News <news@db-news.test>',
      segment,
      readers,
      owner: { ...owner, email: ownerEmail },
      viewer: { ...viewer, email: viewerEmail },
      async close() {
        await browser.close();
        await children.killAll();
        await w.close();
      },
    };
  } catch (e) {
    await children.killAll();
    await w.close();
    throw e;
  }
}
