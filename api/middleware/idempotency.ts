// Idempotency-Key for the operations that declare it (the send routes).
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import * as store from '../../shared/idempotency/store.ts';
import { ServiceError } from '../../shared/errors.ts';
import type { ApiDeps } from '../deps.ts';
import type { Auth } from '../routes/operation.ts';

/** Same key and same body means the same path and the same JSON value (key order and spacing ignored). */
function requestHash(ctx: Context, body: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
          )
        : v;
  const path = ctx.path.replace(/^\/api\/v1(?=\/)/, '');
  return createHash('sha256')
    .update(`${ctx.method} ${path}\n${JSON.stringify(canonical(body))}`)
    .digest('hex');
}

/**
 * Runs `run` under the request's Idempotency-Key, or replays the answer stored for it. `answeredInCommit`: the
 * operation stores its success answer in the commit of its own work (shared/emails/accept.ts), so this stores
 * only refusals; otherwise the success answer is stored here, after the handler.
 */
export async function withIdempotency(
  ctx: Context,
  deps: ApiDeps,
  auth: Auth,
  body: unknown,
  answeredInCommit: boolean,
  run: (reservation: store.Reservation | null) => Promise<void>,
): Promise<void> {
  if (ctx.headers['idempotency-key'] === undefined) return run(null);
  const key = ctx.get('idempotency-key');
  store.validateKey(key);
  const reserved = await store.reserve(deps.db, auth.team.id, key, requestHash(ctx, body));
  if (reserved.kind === 'replay') {
    ctx.status = reserved.status;
    ctx.body = reserved.body;
    ctx.set('Idempotent-Replayed', 'true');
    return;
  }
  const { reservation } = reserved;
  try {
    await run(reservation);
  } catch (err) {
    // A refusal that the same request would meet again (a 4xx other than 409 and 429) is remembered and
    // replayed; anything else (our failure, a conflict, a limit that clears) lets the retry run again.
    if (err instanceof ServiceError && err.status < 500 && err.status !== 409 && err.status !== 429) {
      await store.storeAnswer(deps.db, reservation, err.status, err.toBody());
    } else {
      await store.release(deps.db, reservation);
    }
    throw err;
  }
  if (ctx.status >= 500) await store.release(deps.db, reservation);
  else if (!answeredInCommit) await store.storeAnswer(deps.db, reservation, ctx.status, ctx.body);
}
