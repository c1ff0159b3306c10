// Request logs written in batches: one multi-row INSERT for many requests instead of one statement each.
//
// Two modes. `delayMs > 0` (the api process, api/main.ts): a request hands its row over and does not wait; the
// rows go out every `delayMs` or once `maxRows` are waiting, and on shutdown (`close`). A crash loses at most
// the rows of the last `delayMs` (request logs only, never an email: the email commits in its own statement
// with the server's synchronous_commit). Another api copy may not see a log for up to `delayMs`; reads in this
// process call `flush()` first. `delayMs = 0` (the default, what tests wire): each request waits for its row,
// and the rows of requests finishing together still share one statement (written at the next turn of the
// event loop, or once the statement in flight has ended).
import type { Knex } from 'knex';
import type { Logger } from '../logger.ts';
import { redactJson } from './redact.ts';
import { prepared } from '../db/prepared.ts';
import type { NewRequestLog } from './logs.ts';

export interface RequestLogWriter {
  /** Queues the row; resolves once it is written (delayMs 0) or at once (delayMs > 0). Never rejects. */
  record(log: NewRequestLog): Promise<void>;
  /** Writes whatever is waiting, and waits for any write in flight. */
  flush(): Promise<void>;
  /** flush(), and stops the timer. */
  close(): Promise<void>;
}

export interface WriterOptions {
  delayMs?: number;
  maxRows?: number;
}

/**
 * One statement per batch. The rows travel as one JSON array (one parameter, whatever the batch size). The key
 * of each row's request is touched at most once a minute (its latest use past log retention; the exact latest
 * use is read from the logs, shared/api-keys/keys.ts). `set_config(..., true)` turns synchronous_commit off for
 * this statement's own transaction: the api never waits for a WAL flush for a log.
 */
const BATCH_SQL = `with rows as (
  select * from json_populate_recordset(null::request_logs, ?::json)
), log as (
  insert into request_logs (id, team_id, api_key_id, oauth_grant_id, method, endpoint, response_status, user_agent, duration_ms, request_body, response_body, created_at)
  select id, team_id, api_key_id, oauth_grant_id, method, endpoint, response_status, user_agent, duration_ms, request_body, response_body, created_at from rows
), last_use as (
  select distinct on (api_key_id) api_key_id, team_id, id from rows where api_key_id is not null order by api_key_id, id desc
), key_touch as (
  update api_keys k set last_used_at = now(), last_used_request_log_id = u.id from last_use u
  where k.id = u.api_key_id and k.team_id = u.team_id and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute')
)
select set_config('synchronous_commit', 'off', true)`;

// JSON text escapes NUL and unpaired surrogates (`\u0000`, `\ud800`), and PostgreSQL refuses both escapes in
// json-to-text and jsonb. A log keeps what was sent, so such an escape is stored as its own text: its backslash
// doubled (`\\u0000`), reading back as the six characters `\u0000`. Only escapes preceded by an even run of
// backslashes are escapes; a paired surrogate is written by JSON.stringify as itself, never escaped.
const UNSTORABLE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(0000|d[89a-f][0-9a-f]{2})/gi;
export const storableJson = (text: string) => text.replace(UNSTORABLE_ESCAPE, '$1\\\\u$2');

/** One row as JSON text: the bodies are redacted JSON already, spliced in rather than parsed and re-serialised. */
function rowJson(log: NewRequestLog, at: Date): string {
  const head = JSON.stringify({
    id: log.id,
    team_id: log.team_id,
    api_key_id: log.api_key_id,
    oauth_grant_id: log.oauth_grant_id ?? null,
    method: log.method,
    endpoint: log.endpoint.slice(0, 2048),
    response_status: log.response_status,
    user_agent: log.user_agent?.slice(0, 1024) ?? null,
    duration_ms: log.duration_ms,
    created_at: at.toISOString(),
  });
  const bodies = `"request_body":${redactJson(log.request_body)},"response_body":${redactJson(log.response_body)}`;
  return storableJson(`${head.slice(0, -1)},${bodies}}`);
}

export function requestLogWriter(db: Knex, log: Logger, options: WriterOptions = {}): RequestLogWriter {
  const delayMs = options.delayMs ?? 0;
  const maxRows = options.maxRows ?? 100;
  let waiting: string[] = [];
  let waiters: (() => void)[] = [];
  let inFlight: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let scheduled = false;

  // A row that fails its statement must not take the others of its batch (other teams' logs) with it: a failed
  // batch is written again in halves, down to the one row that fails, which alone is lost (and logged).
  const write = async (rows: string[]): Promise<void> => {
    try {
      await prepared(db, 'pw_request_logs', BATCH_SQL, [`[${rows.join(',')}]`]);
    } catch (err) {
      if (rows.length === 1) return void log.error({ err, row: rows[0].slice(0, 200) }, 'request_log.write_failed');
      const half = Math.ceil(rows.length / 2);
      await write(rows.slice(0, half));
      await write(rows.slice(half));
    }
  };

  // One statement at a time: rows that arrive meanwhile form the next batch.
  const drain = async (): Promise<void> => {
    const rows = waiting.splice(0, maxRows);
    const done = waiters.splice(0, rows.length);
    if (rows.length) await write(rows);
    for (const resolve of done) resolve();
  };
  const kick = () => {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    scheduled = false;
    if (inFlight) return inFlight;
    inFlight = drain().finally(() => {
      inFlight = null;
      if (waiting.length > 0) schedule();
    });
    return inFlight;
  };
  const schedule = () => {
    if (delayMs === 0) {
      if (!scheduled) {
        scheduled = true;
        setImmediate(kick);
      }
    } else if (waiting.length >= maxRows) {
      void kick();
    } else if (!timer && !inFlight) {
      timer = setTimeout(kick, delayMs);
      timer.unref();
    }
  };

  return {
    record(entry) {
      let row: string;
      try {
        row = rowJson(entry, new Date());
      } catch (err) {
        log.error({ err }, 'request_log.write_failed');
        return Promise.resolve();
      }
      waiting.push(row);
      const written = new Promise<void>((resolve) => waiters.push(resolve));
      schedule();
      return delayMs === 0 ? written : Promise.resolve();
    },
    async flush() {
      while (inFlight || waiting.length > 0) await kick();
    },
    async close() {
      await this.flush();
      if (timer) clearTimeout(timer);
      timer = null;
      waiting = [];
      waiters = [];
    },
  };
}
