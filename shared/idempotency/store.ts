// Idempotency-Key (CONTRACT): scoped to the team, kept 24 h. Same key + same body replays the first answer;
// a different body is 409 invalid_idempotent_request; a first request still in flight is 409
// concurrent_idempotent_requests. A reservation (the in-flight row) older than STALE_MS belonged to a crashed
// process and is taken over. The answer is stored by the statement that commits the request's work when there
// is one (answerUpdate, composed into the accept statement), so no crash can separate the two.
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import { ServiceError } from '../errors.ts';

export const RETENTION_MS = 24 * 60 * 60 * 1000;
export const STALE_MS = 60 * 1000;

/** A key reserved for one run of a request; the token tells this run's row from a later takeover's. */
export interface Reservation {
  teamId: string;
  key: string;
  token: string;
}

export type Reserved =
  { kind: 'reserved'; reservation: Reservation } | { kind: 'replay'; status: number; body: unknown };

/**
 * A header that is present but blank is refused: a client whose key variable is empty must not lose its protection
 * silently.
 */
export function validateKey(key: string): void {
  if (key.trim().length < 1 || key.length > 256) {
    throw new ServiceError('invalid_idempotency_key', 'The Idempotency-Key header must be 1 to 256 characters long.');
  }
}

export async function reserve(db: Knex, teamId: string, key: string, requestHash: string): Promise<Reserved> {
  const reservation = { teamId, key, token: randomUUID() };
  const inserted = await db('idempotency_keys')
    .insert({ team_id: teamId, key, request_hash: requestHash, status: 'in_flight', claim_token: reservation.token })
    .onConflict(['team_id', 'key'])
    .ignore()
    .returning('key');
  if (inserted.length > 0) return { kind: 'reserved', reservation };

  // Take over an expired record, or an in-flight one abandoned by a crash, in one conditional update.
  const now = Date.now();
  const taken = await db('idempotency_keys')
    .where({ team_id: teamId, key })
    .andWhere((w) => {
      w.where('created_at', '<', new Date(now - RETENTION_MS)).orWhere((s) =>
        s
          .where('status', 'in_flight')
          .andWhere('created_at', '<', new Date(now - STALE_MS))
          .andWhere('request_hash', requestHash),
      );
    })
    .update({
      request_hash: requestHash,
      status: 'in_flight',
      response_status: null,
      response_body: null,
      created_at: new Date(now),
      claim_token: reservation.token,
    })
    .returning('key');
  if (taken.length > 0) return { kind: 'reserved', reservation };

  const row = await db('idempotency_keys').where({ team_id: teamId, key }).first();
  if (!row) return reserve(db, teamId, key, requestHash);
  if (row.request_hash !== requestHash) {
    throw new ServiceError(
      'invalid_idempotent_request',
      'This Idempotency-Key was already used with a different request body.',
    );
  }
  if (row.status === 'in_flight') {
    throw new ServiceError(
      'concurrent_idempotent_requests',
      'A request with this Idempotency-Key is still being processed. Try again shortly.',
    );
  }
  return { kind: 'replay', status: row.response_status, body: row.response_body };
}

/**
 * The UPDATE that stores a reservation's answer, for a caller to run or to compose into its own statement (as a
 * CTE, with a condition appended by `and ...`). It stores nothing once the reservation was taken over.
 */
export function answerUpdate(r: Reservation, status: number, body: unknown): { sql: string; bindings: unknown[] } {
  return {
    sql: `update idempotency_keys set status = 'done', response_status = ?::int, response_body = ?::jsonb
      where team_id = ?::uuid and key = ? and status = 'in_flight' and claim_token = ?`,
    bindings: [status, JSON.stringify(body), r.teamId, r.key, r.token],
  };
}

export async function storeAnswer(db: Knex, r: Reservation, status: number, body: unknown): Promise<void> {
  const { sql, bindings } = answerUpdate(r, status, body);
  await db.raw(sql, bindings as Knex.RawBinding[]);
}

/** Forgets a reservation whose request failed on our side, so the client's retry runs again. */
export async function release(db: Knex, r: Reservation): Promise<void> {
  await db('idempotency_keys')
    .where({ team_id: r.teamId, key: r.key, status: 'in_flight', claim_token: r.token })
    .delete();
}

export async function purgeExpired(db: Knex, now = new Date()): Promise<number> {
  return db('idempotency_keys')
    .where('created_at', '<', new Date(now.getTime() - RETENTION_MS))
    .delete();
}
