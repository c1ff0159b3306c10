// Request logs: every request made with a team's credentials (written in batches by writer.ts).
import type { Knex } from 'knex';
import { notFound } from '../errors.ts';
import { paginate, type ListQuery } from '../pagination.ts';

export interface RequestLogRow {
  id: string;
  team_id: string;
  api_key_id: string | null;
  oauth_grant_id: string | null;
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
  /** The OAuth grant (our `oauth_grants` id) of a request made with an access token. */
  oauth_grant_id?: string | null;
  method: string;
  endpoint: string;
  response_status: number;
  user_agent: string | null;
  duration_ms: number;
  request_body: unknown;
  response_body: unknown;
}

export async function getLog(db: Knex, teamId: string, id: string): Promise<RequestLogRow> {
  const row = await db<RequestLogRow>('request_logs').where({ id, team_id: teamId }).first();
  if (!row) throw notFound('Log');
  return row;
}

export function listLogs(db: Knex, teamId: string, page: ListQuery) {
  return paginate<RequestLogRow>(
    db('request_logs')
      .where({ team_id: teamId })
      .select(
        'id',
        'created_at',
        'endpoint',
        'method',
        'response_status',
        'user_agent',
        'duration_ms',
        'oauth_grant_id',
      ),
    page,
  );
}
