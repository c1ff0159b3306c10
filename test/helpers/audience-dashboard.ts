// The audience pages' world: the platform (api in this process, serving the built dashboard), the real worker
// (imports), a team with an admin and a viewer made straight in the database (no mail round trip: the accounts
// tests cover sign-up), and a browser page signed in through the sign-in page.
import type { Browser, Page } from 'playwright-core';
import { signUp, verifyEmail } from '../../shared/accounts/signup.ts';
import { createTeamForUser } from '../../shared/teams/members.ts';
import { newId } from '../../shared/ids.ts';
import { startPlatform, type Platform } from './platform.ts';
import { startEntry, type EntryProcess } from './processes.ts';
import { openPage, DESKTOP, type Visit } from './browser.ts';
import { signInThroughPage } from './dashboard.ts';

export const PASSWORD = 'an audience dashboard password';

export interface AudienceWorld {
  p: Platform;
  worker: EntryProcess | null;
  teamId: string;
  admin: string;
  viewer: string;
  close(): Promise<void>;
}

async function account(p: Platform, email: string): Promise<string> {
  const { token } = await signUp(p.db, { email, password: PASSWORD });
  return (await verifyEmail(p.db, token!)).id;
}

export async function startAudienceWorld(withWorker: boolean): Promise<AudienceWorld> {
  const p = await startPlatform();
  const admin = `admin@people.test`;
  const viewer = `viewer@people.test`;
  const adminId = await account(p, admin);
  const { team } = await createTeamForUser(
    p.db,
    adminId,
    { name: 'Audience <b>team</b>' },
    p.config.MANAGED_DOMAIN_HOST,
  );
  const viewerId = await account(p, viewer);
  await p.db('team_members').insert({ id: newId(), team_id: team.id, user_id: viewerId, role: 'viewer' });
  let worker: EntryProcess | null = null;
  if (withWorker) {
    worker = startEntry('worker/main.ts', p.config);
    await worker.logged('worker.started', 120_000);
  }
  return {
    p,
    worker,
    teamId: team.id,
    admin,
    viewer,
    async close() {
      await worker?.stop();
      await p.close();
    },
  };
}

/** A fresh browser context signed in as `email` through the sign-in page. */
export async function signedInPage(browser: Browser, url: string, email: string): Promise<Visit> {
  const v = await openPage(browser, DESKTOP);
  await signInThroughPage(v.page, url, email, PASSWORD);
  await v.page.locator('#who').waitFor({ timeout: 60_000 });
  return v;
}

/** The rows of the contacts table as their addresses. */
export const addresses = (page: Page) => page.locator('#contacts-table tbody td.address').allTextContents();

/** Console errors but the expected refusals (a refused form, a refused filter's count). */
export const unexpected = (v: Visit) => v.errors.filter((e) => !/status of (401|404|409|413|422)/.test(e));
