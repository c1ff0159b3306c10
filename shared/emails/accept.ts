// Accepting sends: the one path from a caller's request to committed, queued emails, for POST /emails,
// POST /emails/batch and SMTP submission alike. prepare (every check, nothing written) → persist (one statement,
// or one transaction, with the Idempotency-Key answer) → enqueue (after the commit: the answer never precedes
// it, and the sweep covers a lost enqueue).
import type { Knex } from 'knex';
import { ServiceError } from '../errors.ts';
import type { EnqueueDelivery } from './enqueue.ts';
import { storeAnswer, type Reservation } from '../idempotency/store.ts';
import { persistEmails, type OnRefused, type PersistContext } from './persist.ts';
import { prepareEmail, type Caller, type PrepareContext, type PreparedEmail, type SendInput } from './prepare.ts';
import type { EmailsAccepted } from '../metrics/sends.ts';

export interface AcceptDeps extends PersistContext, PrepareContext {
  db: Knex;
  enqueueDelivery: EnqueueDelivery;
  /** Counts the emails committed, by the caller's source (shared/metrics/sends.ts). */
  metrics?: { emailsAccepted: EmailsAccepted };
}

/** One send as its entry point read it: the API's JSON, or a submitted message's fields and its MIME. */
export interface SendRequest {
  input: SendInput;
  raw?: PreparedEmail['raw'];
}

/** A batch item that was refused while the rest went on (permissive batches). */
export interface ItemError {
  index: number;
  message: string;
}

export interface AcceptOptions<T> {
  now: Date;
  /** Reads one item into a send; a ServiceError thrown here refuses the item like any failed check. */
  read(item: T): Promise<SendRequest> | SendRequest;
  /** null: a single send, refused as it is. A batch refuses all on any error (strict) or sends the valid ones. */
  batch: null | 'strict' | 'permissive';
  /** The Idempotency-Key reservation: its answer is stored with the emails, in their commit. */
  reservation: Reservation | null;
}

/** The answer of a send: `{ id }`; of a batch: `{ data: [{ id }], errors? }` (errors in permissive mode). */
export type Accepted = { id: string } | { data: { id: string }[]; errors?: ItemError[] };

/** A batch item's refusal as the whole batch's (strict mode): the item's index in the message and in details. */
const itemRefusal = (err: ServiceError, index: number) =>
  new ServiceError(err.errorName, `Email ${index}: ${err.message}`, {
    ...err.options,
    details: { ...err.options.details, index },
  });

function answerOf(batch: AcceptOptions<unknown>['batch'], ids: string[], errors: ItemError[]): Accepted {
  if (batch === null) return { id: ids[0] };
  return {
    data: ids.map((id) => ({ id })),
    ...(batch === 'permissive' ? { errors: [...errors].sort((a, b) => a.index - b.index) } : {}),
  };
}

/** Prepares each item; answers the prepared sends with their batch index, refusing or recording each failure. */
async function prepareAll<T>(deps: AcceptDeps, caller: Caller, items: T[], o: AcceptOptions<T>, errors: ItemError[]) {
  const prepared: { email: PreparedEmail; index: number }[] = [];
  for (const [index, item] of items.entries()) {
    try {
      const request = await o.read(item);
      const email = await prepareEmail(deps.db, deps, caller, request.input, o.now);
      if (request.raw) email.raw = request.raw;
      prepared.push({ email, index });
    } catch (err) {
      if (!(err instanceof ServiceError) || o.batch === null) throw err;
      if (o.batch === 'strict') throw itemRefusal(err, index);
      errors.push({ index, message: err.message });
    }
  }
  return prepared;
}

/**
 * Accepts one send or a batch: answers once the emails are committed (with the Idempotency-Key answer, when
 * reserved) and their delivery enqueued, or throws the refusal, having written nothing.
 */
export async function acceptSends<T>(
  deps: AcceptDeps,
  caller: Caller,
  items: T[],
  o: AcceptOptions<T>,
): Promise<Accepted> {
  // A team whose deletion is scheduled sends nothing (shared/teams/deletion.ts), by any door.
  if (caller.team.deletion_status && caller.team.deletion_status !== 'none')
    throw new ServiceError(
      'validation_error',
      'This team is scheduled for deletion: sending is stopped. An admin can cancel the deletion to send again.',
      { status: 403 },
    );
  const errors: ItemError[] = [];
  const prepared = await prepareAll(deps, caller, items, o, errors);
  if (prepared.length === 0) {
    // A permissive batch whose every item was refused: nothing to commit but the answer.
    const accepted = answerOf(o.batch, [], errors);
    if (o.reservation) await storeAnswer(deps.db, o.reservation, 200, accepted);
    return accepted;
  }
  // The bulk rule decides as the emails are written: an email past it is refused there, as any invalid item.
  const onRefused: OnRefused | undefined =
    o.batch === null
      ? undefined
      : (position, err) => {
          if (o.batch === 'strict') throw itemRefusal(err, prepared[position].index);
          errors.push({ index: prepared[position].index, message: err.message });
        };
  const answer = o.reservation
    ? { reservation: o.reservation, status: 200, body: (ids: string[]) => answerOf(o.batch, ids, errors) }
    : undefined;
  const rows = await persistEmails(
    deps.db,
    deps,
    caller,
    prepared.map((p) => p.email),
    o.now,
    onRefused,
    answer,
  );
  deps.metrics?.emailsAccepted.inc({ surface: caller.source }, rows.length);
  await deps.enqueueDelivery(rows.filter((r) => r.status === 'queued').map((r) => r.id));
  return answerOf(
    o.batch,
    rows.map((r) => r.id),
    errors,
  );
}
