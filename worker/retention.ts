// The nightly retention job (03:00 UTC, the maintenance queue): teams whose deletion's 30 days have passed are
// erased (shared/teams/deletion.ts), export archives past their 7 days expire, and the accounts area's spent rows go
// (mailed tokens, MFA challenges and sessions a day past their end). `now` is a parameter: the tests run the job
// with a moved clock.
import type { Knex } from 'knex';
import type { BlobStore } from '../shared/blobs.ts';
import type { Logger } from '../shared/logger.ts';
import type { Redis } from '../shared/redis.ts';
import { purgeDueDeletions } from '../shared/teams/deletion.ts';
import { expireExports } from '../shared/teams/export.ts';

export interface RetentionDeps {
  db: Knex;
  blobs: BlobStore;
  redis: Redis;
  config: { REDIS_PREFIX: string };
  log: Logger;
}

const DAY = 86_400_000;

export async function runRetention(deps: RetentionDeps, now = new Date()) {
  const teams_erased = (await purgeDueDeletions(deps, now)).length;
  const exports_expired = await expireExports(deps.db, deps.blobs, now);
  const dayAgo = new Date(now.getTime() - DAY);
  const tokens = await deps.db('account_tokens').where('expires_at', '<', dayAgo).delete();
  const challenges = await deps.db('mfa_challenges').where('expires_at', '<', dayAgo).delete();
  const sessions = await deps
    .db('sessions')
    .where((q) => q.where('expires_at', '<', dayAgo).orWhere('revoked_at', '<', dayAgo))
    .delete();
  return { teams_erased, exports_expired, account_rows: tokens + challenges + sessions };
}
