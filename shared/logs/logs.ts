// Request logs: every request made with a team's credentials.
import type { Knex } from 'knex';
import { notFound } from '../errors.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import { redactBody } from './redact.ts';

export interface RequestLogRow {
  id: string;
  team_id: string;
  api_key_id: string | null;
  method: string;
  endpoint: string;
  response_status: number;
  user_agent: string | null;
  duration_ms: number;
  request_body: unknown;
  response_body: unknown;
  created_at: Date;
}

export interface NewRequestLog {
  id: string;
  team_id: string;
  api_key_id: string | null;
  method: string;
  endpoint: string;
  response_status: number;
  user_agent: string | null;
  duration_ms: number;
  request_body: unknown;
  response_body: unknown;
}

/**
 * Writes the log row, and touches the key's own row at most once a minute (it keeps the last use past log
 * retention; the exact latest use is read from the logs, shared/api-keys/keys.ts; a row that does not match is
 * not locked, so the touch costs nothing while the minute has not passed). One statement, one round trip, whose
 * commit does not wait for the WAL flush: `set_config(..., true)` sets synchronous_commit off for its own
 * (implicit) transaction, which is still in force when that transaction commits. A crash may lose the last few
 * log rows, never an email (an email's transaction keeps the server's synchronous_commit), and the api does not
 * pay an fsync per request.
 */
export async function recordRequest(db: Knex, log: NewRequestLog): Promise<void> {
  const row = {
    ...log,
    user_agent: log.user_agent?.slice(0, 1024) ?? null,
    endpoint: log.endpoint.slice(0, 2048),
    request_body: JSON.stringify(redactBody(log.request_body)),
    response_body: JSON.stringify(redactBody(log.response_body)),
  };
  let q = db.queryBuilder().with('log', db('request_logs').insert(row));
  if (log.api_key_id) {
    q = q.with('key_touch', db('api_keys')
      .where({ id: log.api_key_id, team_id: log.team_id })
      .andWhere((w) => w.whereNull('last_used_at').orWhere('last_used_at', '<', db.raw("now() - interval '1 minute'")))
      .update({ last_used_at: db.fn.now(), last_used_request_log_id: log.id }));
  }
  await q.select(db.raw("set_config('synchronous_commit', 'off', true)"));
}

export async function getLog(db: Knex, teamId: string, id: string): Promise<RequestLogRow> {
  const row = await db<RequestLogRow>('request_logs').where({ id, team_id: teamId }).first();
  if (!row) throw notFound('Log');
  return row;
}

export function listLogs(db: Knex, teamId: string, page: ListQuery) {
  return paginate<RequestLogRow>(
    db('request_logs').where({ team_id: teamId }).select('id', 'created_at', 'endpoint', 'method', 'response_status', 'user_agent', 'duration_ms'),
    page,
  );
}
