// Idempotency-Key for the operations that declare it (the send routes).
import { createHash } from 'node:crypto';
import type { Context, Next } from 'koa';
import * as store from '../../shared/idempotency/store.ts';
import { ServiceError } from '../../shared/errors.ts';
import type { Knex } from 'knex';

export interface IdempotencyHandle {
  key: string;
  token: string;
  complete(trx: Knex, status: number, answer: unknown): Promise<void>;
  /** Set by a handler whose own statement stored the answer (persistEmails): nothing is left to store after it. */
  stored: boolean;
}
import type { ApiDeps } from '../deps.ts';
import type { Auth } from '../routes/operation.ts';

/** Same key and same body means the same path and the same JSON value (key order and spacing ignored). */
function requestHash(ctx: Context, body: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canonical)
      : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]))
        : v;
  const path = ctx.path.replace(/^\/api\/v1(?=\/)/, '');
  return createHash('sha256').update(`${ctx.method} ${path}\n${JSON.stringify(canonical(body))}`).digest('hex');
}

export async function withIdempotency(ctx: Context, deps: ApiDeps, auth: Auth, body: unknown, next: Next): Promise<void> {
  if (ctx.headers['idempotency-key'] === undefined) return next();
  const key = ctx.get('idempotency-key');
  store.validateKey(key);
  const teamId = auth.team.id;
  const claimed = await store.claim(deps.db, teamId, key, requestHash(ctx, body));
  if (claimed.kind === 'replay') {
    ctx.status = claimed.status;
    ctx.body = claimed.body;
    ctx.set('Idempotent-Replayed', 'true');
    return;
  }
  const { token } = claimed;
  // A handler that commits its own work may store the answer in that same transaction (see persistEmails).
  const handle: IdempotencyHandle = {
    key,
    token,
    complete: (trx: Knex, status: number, answer: unknown) => store.complete(trx, teamId, key, token, status, answer),
    stored: false,
  };
  ctx.state.idempotency = handle;
  try {
    await next();
  } catch (err) {
    // A refusal that the same request would meet again (a 4xx other than 409 and 429) is remembered and
    // replayed; anything else (our failure, a conflict, a limit that clears) lets the retry run again.
    if (err instanceof ServiceError && err.status < 500 && err.status !== 409 && err.status !== 429) {
      await store.complete(deps.db, teamId, key, token, err.status, err.toBody());
    } else {
      await store.release(deps.db, teamId, key, token);
    }
    throw err;
  }
  if (ctx.status >= 500) await store.release(deps.db, teamId, key, token);
  else if (!handle.stored) await store.complete(deps.db, teamId, key, token, ctx.status, ctx.body);
}
