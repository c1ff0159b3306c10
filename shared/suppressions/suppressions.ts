// Suppressions: the addresses a team will not send to, added by hand or by a bounce, complaint or unsubscribe.
// Every function takes `db` first (knex or a transaction), so the send path can check and add inside its own
// transaction; each change records its `suppression.*` event in the same transaction, and only when something
// changed.
import type { Knex } from 'knex';
import { newId, isUuid } from '../ids.ts';
import { recordEvent } from '../events.ts';
import { ServiceError } from '../errors.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import { isoRequired } from '../time.ts';

export const origins = ['bounce', 'complaint', 'manual', 'unsubscribe'] as const;
export type SuppressionOrigin = (typeof origins)[number];

export interface SuppressionRow {
  id: string;
  team_id: string;
  email: string;
  origin: SuppressionOrigin;
  source_id: string | null;
  created_at: Date;
}

/**
 * How strongly an origin says "never send here", weakest first. Adding an address that is already suppressed
 * keeps its row (same id, same created_at) and only replaces a weaker origin by a stronger one, since one row
 * holds one reason and the reason that survives must be the one whose loss would hurt most: the recipient's own
 * word (a complaint, then an unsubscribe) outranks a bounce, which can heal (a mailbox re-created) and is the
 * entry a team removes on that ground, and all three outrank the team's own manual entry. A weaker or equal
 * origin changes nothing.
 */
const strength: Record<SuppressionOrigin, number> = { manual: 0, bounce: 1, unsubscribe: 2, complaint: 3 };

export const EMAIL_MIN_LENGTH = 3;
export const EMAIL_MAX_LENGTH = 320;

/**
 * Why `value` is not an address a suppression can hold, or null when it is. Deliberately modest (spec: 3-320
 * characters): one `@` (a quoted local part holding another is not accepted), something before it, a domain
 * with a dot and no empty label after it, no whitespace or control characters.
 */
export function addressProblem(value: string): string | null {
  const v = value.trim();
  if (v.length < EMAIL_MIN_LENGTH || v.length > EMAIL_MAX_LENGTH)
    return `must be ${EMAIL_MIN_LENGTH}-${EMAIL_MAX_LENGTH} characters`;
  if (/[\s\p{Cc}]/u.test(v)) return 'must not contain spaces or control characters';
  const at = v.indexOf('@');
  if (at < 0 || at !== v.lastIndexOf('@')) return 'must contain exactly one @';
  if (at === 0) return 'needs a local part before the @';
  const domain = v.slice(at + 1);
  if (!domain.includes('.')) return 'needs a domain with a dot after the @';
  if (domain.split('.').some((label) => label === '')) return 'has an empty label in its domain';
  return null;
}

/**
 * The form an address is stored and matched in: trimmed and lower case. RFC 5321 §2.4 lets a server treat the
 * local part case-sensitively, but mailbox providers do not, and on a suppression list the error goes the safe
 * way: matching `Bob@` to a suppressed `bob@` withholds mail at worst, while matching case-sensitively would
 * send again to someone who complained under another spelling.
 */
export function canonicalAddress(value: string): string {
  return value.trim().toLowerCase();
}

/** The canonical address, or null when `value` is not an address (see addressProblem). */
export function normalizeAddress(value: string): string | null {
  return addressProblem(value) === null ? canonicalAddress(value) : null;
}

/** The `data` of a `suppression.*` event (the list item's fields). */
export function suppressionEventData(row: SuppressionRow) {
  return {
    id: row.id,
    email: row.email,
    origin: row.origin,
    source_id: row.source_id,
    created_at: isoRequired(row.created_at),
  };
}

export interface AddSuppressionInput {
  email: string;
  origin: SuppressionOrigin;
  /** What caused it (the email that bounced or drew the complaint); null for a manual entry. */
  source_id?: string | null;
}

/**
 * Suppresses an address; idempotent. A new row records `suppression.added`; an existing one is returned as it
 * is (`changed` false, no event) unless the new origin is stronger (see `strength`), in which case its origin
 * and source_id are replaced and `suppression.added` is recorded again with the new reason.
 */
export async function addSuppression(
  db: Knex,
  teamId: string,
  input: AddSuppressionInput,
): Promise<{ row: SuppressionRow; changed: boolean }> {
  const problem = addressProblem(input.email);
  if (problem) {
    throw new ServiceError('validation_error', `Invalid \`email\`: ${problem}`, {
      errors: [{ path: 'email', message: problem }],
    });
  }
  const email = canonicalAddress(input.email);
  const sourceId = input.source_id ?? null;
  return db.transaction(async (trx) => {
    // A concurrent delete can remove the conflicting row between the insert and the read: then insert again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const [inserted] = await trx<SuppressionRow>('suppressions')
        .insert({ id: newId(), team_id: teamId, email, origin: input.origin, source_id: sourceId })
        .onConflict(['team_id', 'email'])
        .ignore()
        .returning('*');
      if (inserted) {
        await recordEvent(trx, teamId, 'suppression.added', suppressionEventData(inserted));
        return { row: inserted, changed: true };
      }
      const existing = await trx<SuppressionRow>('suppressions').where({ team_id: teamId, email }).forUpdate().first();
      if (!existing) continue;
      if (strength[input.origin] <= strength[existing.origin]) return { row: existing, changed: false };
      const [updated] = await trx<SuppressionRow>('suppressions')
        .where({ id: existing.id })
        .update({ origin: input.origin, source_id: sourceId })
        .returning('*');
      await recordEvent(trx, teamId, 'suppression.added', suppressionEventData(updated));
      return { row: updated, changed: true };
    }
    throw new Error(`suppression of ${email} kept vanishing under concurrent deletes`);
  });
}

/**
 * The suppression an email's recipient earns by a hard bounce (origin `bounce`) or a complaint (`complaint`),
 * naming the email as its source. An address the list cannot hold (no dot in its domain) is skipped: the bounce
 * or complaint stands all the same. Used by the MTA (a 5xx during delivery) and the inbound MX (a DSN or ARF).
 */
export async function suppressRecipient(
  db: Knex,
  teamId: string,
  address: string,
  origin: 'bounce' | 'complaint',
  emailId: string,
): Promise<void> {
  if (addressProblem(address) === null)
    await addSuppression(db, teamId, { email: address, origin, source_id: emailId });
}

/** Several addresses in one transaction (all or none); one result per input, in order. */
export async function addSuppressions(
  db: Knex,
  teamId: string,
  inputs: AddSuppressionInput[],
): Promise<{ row: SuppressionRow; changed: boolean }[]> {
  return db.transaction(async (trx) => {
    const results = [];
    for (const input of inputs) results.push(await addSuppression(trx, teamId, input));
    return results;
  });
}

/** `id_or_email` of the API: a UUID names an id, anything else an address (null when it is not one). */
function lookup(idOrEmail: string): { id: string } | { email: string } | null {
  if (isUuid(idOrEmail)) return { id: idOrEmail };
  const email = normalizeAddress(idOrEmail);
  return email ? { email } : null;
}

/** The team's suppression named by id or address, or null (another team's is null too). */
export async function findSuppression(db: Knex, teamId: string, idOrEmail: string): Promise<SuppressionRow | null> {
  const where = lookup(idOrEmail);
  if (!where) return null;
  return (
    (await db<SuppressionRow>('suppressions')
      .where({ team_id: teamId, ...where })
      .first()) ?? null
  );
}

/** Lifts a suppression named by id or address; records `suppression.removed`. Null when there was none. */
export async function removeSuppression(db: Knex, teamId: string, idOrEmail: string): Promise<SuppressionRow | null> {
  const where = lookup(idOrEmail);
  if (!where) return null;
  return db.transaction(async (trx) => {
    const [row] = await trx<SuppressionRow>('suppressions')
      .where({ team_id: teamId, ...where })
      .delete()
      .returning('*');
    if (!row) return null;
    await recordEvent(trx, teamId, 'suppression.removed', suppressionEventData(row));
    return row;
  });
}

/** Several removals in one transaction; one result per item, in order (null: nothing was removed by it). */
export async function removeSuppressions(
  db: Knex,
  teamId: string,
  idsOrEmails: string[],
): Promise<(SuppressionRow | null)[]> {
  return db.transaction(async (trx) => {
    const results = [];
    for (const item of idsOrEmails) results.push(await removeSuppression(trx, teamId, item));
    return results;
  });
}

/**
 * For the send path: which of `emails` the team suppresses, in one query. The map is keyed by the addresses
 * as passed (each matched case-insensitively, see canonicalAddress); an address absent from it may be sent to.
 */
export async function isSuppressed(db: Knex, teamId: string, emails: string[]): Promise<Map<string, SuppressionRow>> {
  const found = new Map<string, SuppressionRow>();
  if (emails.length === 0) return found;
  const canonical = [...new Set(emails.map(canonicalAddress))];
  const rows = await db<SuppressionRow>('suppressions').where({ team_id: teamId }).whereIn('email', canonical);
  const byEmail = new Map(rows.map((r) => [r.email, r]));
  for (const email of emails) {
    const row = byEmail.get(canonicalAddress(email));
    if (row) found.set(email, row);
  }
  return found;
}

/** A page of the team's suppressions, newest first, optionally of one origin. */
export function listSuppressions(db: Knex, teamId: string, page: ListQuery & { origin?: SuppressionOrigin }) {
  const query = db('suppressions').where({ team_id: teamId });
  if (page.origin) query.where({ origin: page.origin });
  return paginate<SuppressionRow>(query, page);
}
