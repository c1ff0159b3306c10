// The api's engagement writer: hits are answered at once (the pixel, the redirect) and recorded a moment later, many
// per transaction (engagement.ts recordEngagement), one transaction at a time: every delayMs, or as soon as maxRows
// wait. A hit is a few hundred bytes; at most maxPending wait (PostgreSQL gone for a while), then new ones are
// dropped and counted. A batch that fails is tried once more, alone, then dropped and logged: a click must never wait
// on the database, and losing a few hits is the price (docs/tracking.md). close() records what waits.
import type { Knex } from 'knex';
import type { Logger } from '../logger.ts';
import { recordEngagement, type Hit, type Recorded } from './engagement.ts';

export interface RecorderOptions {
  delayMs: number;
  maxRows: number;
  maxPending: number;
  machineWindowSeconds: number;
  /** Told of each batch written (the api's metrics). */
  recorded?: (r: Recorded) => void;
  dropped?: (n: number) => void;
}

export interface EngagementRecorder {
  add(hit: Hit): void;
  /** Records everything added so far. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function engagementRecorder(db: Knex, log: Logger, options: RecorderOptions): EngagementRecorder {
  let pending: Hit[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  /** A drain is queued behind the one running: more flushes add nothing to it. */
  let queued = false;
  let closed = false;

  const write = async (batch: Hit[]) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const r = await db.transaction(async (trx) => {
          // The commit does not wait for its WAL to reach the disk: the hits were answered before this batch began,
          // so a crash can lose the hits waiting here anyway; PostgreSQL's own crash loses at most its last ~0.6 s of
          // batches, each whole (engagements, events and counts together). Sends' commits, which do wait, then no
          // longer queue behind this one's flush.
          await trx.raw('set local synchronous_commit = off');
          return recordEngagement(trx, batch, { machineWindowSeconds: options.machineWindowSeconds });
        });
        options.recorded?.(r);
        return;
      } catch (err) {
        if (attempt >= 2) {
          log.error({ err, hits: batch.length }, 'tracking.record_failed');
          options.dropped?.(batch.length);
          return;
        }
      }
    }
  };

  const flush = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    if (queued) return writing;
    queued = true;
    writing = writing.then(async () => {
      queued = false;
      // What waits when the drain starts, in batches of maxRows; hits that arrive meanwhile wait for the timer or the
      // full batch their add() set going, so a steady stream is written every delayMs rather than in as many small
      // transactions as the previous one's commit takes.
      let owed = pending.length;
      while (owed > 0) {
        const batch = pending.slice(0, Math.min(owed, options.maxRows));
        pending = pending.slice(batch.length);
        owed -= batch.length;
        await write(batch);
      }
    });
    return writing;
  };

  return {
    add(hit) {
      if (closed || pending.length >= options.maxPending) {
        options.dropped?.(1);
        return;
      }
      pending.push(hit);
      if (pending.length >= options.maxRows) void flush();
      else timer ??= setTimeout(() => void flush(), options.delayMs);
    },
    flush,
    async close() {
      closed = true;
      await flush();
    },
  };
}
