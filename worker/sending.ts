// Scheduled sends: released (status scheduled → queued) once their time has come, then handed to the MTA.
import type { Knex } from 'knex';
import type { Counter } from 'prom-client';
import { releaseDueEmails } from '../shared/emails/store.ts';
import type { EnqueueDelivery } from '../shared/emails/enqueue.ts';
import type { Logger } from '../shared/logger.ts';

/** The worker's release runs at every multiple of this on the clock (./tickers.ts): an email waits at most this. */
export const RELEASE_EVERY_MS = 500;

/** Where a release is told: an `email.released` line per email (with the request that sent it) and a counter. */
export interface ReleaseReport {
  log: Logger;
  released?: Counter;
}

/** Releases every email due at `now`, a batch at a time (a full batch means more may be waiting). */
export async function releaseScheduled(
  db: Knex,
  enqueue: EnqueueDelivery,
  now = new Date(),
  batch = 500,
  report?: ReleaseReport,
): Promise<number> {
  let released = 0;
  for (;;) {
    const emails = await releaseDueEmails(db, now, batch);
    await enqueue(emails.map((e) => e.id));
    for (const e of emails)
      report?.log.info({ emailId: e.id, requestId: e.request_id, teamId: e.team_id }, 'email.released');
    report?.released?.inc(emails.length);
    released += emails.length;
    if (emails.length < batch) return released;
  }
}
