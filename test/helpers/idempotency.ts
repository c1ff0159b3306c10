// What the Idempotency-Key tests read: a refusal that is not a replay, and the key's stored record.
import type { ExecutionContext } from 'ava';
import type { Platform, TestResponse } from './platform.ts';

/** An error answer in the Error shape (`status`, `name`), never a replayed one. */
export function isRefusal(t: ExecutionContext, res: TestResponse, status: number, name: string) {
  t.is(res.status, status, res.text);
  t.like(res.body, { statusCode: status, name });
  t.is(typeof res.body.message, 'string');
  t.is(res.headers.get('idempotent-replayed'), null);
}

/** The stored record of the team's Idempotency-Key. */
export const keyRow = (p: Platform, teamId: string, key: string) =>
  p.db('idempotency_keys').where({ team_id: teamId, key }).first();
