// The team's contact allowance (`contacts_included`, 0 = unlimited; interface spec, Limits: Contacts): past it new
// contacts are refused, through the API and in imports alike; contacts already there are never touched. On a
// limited team every write that may add a contact takes the team's allowance lock first (a transaction-scoped
// advisory lock), so two concurrent creates cannot both take the last place: the second counts after the first
// commits. An unlimited team takes no lock and counts nothing on the write path.
import type { Knex } from 'knex';
import { ServiceError } from '../errors.ts';
import { billableAmong, billableCount, recordPeak } from './billable.ts';

/** The advisory lock's class (its first key); the second is the team id's hash. */
const ALLOWANCE_LOCK = 1801;

/** The team's allowance; on a limited team, locked until the caller's transaction ends. */
export async function lockAllowance(trx: Knex, teamId: string): Promise<number> {
  const team = await trx('teams').where({ id: teamId }).first('contacts_included');
  const included: number = team?.contacts_included ?? 0;
  if (included > 0) await trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [ALLOWANCE_LOCK, teamId]);
  return included;
}

/** Why a new contact is refused: the message names the setting, `details` the figures. */
export function allowanceReason(included: number): string {
  return `the team's contact allowance is reached (contacts_included = ${included} billable contacts)`;
}

export function allowanceError(included: number, billable: number): ServiceError {
  return new ServiceError(
    'validation_error',
    `New contacts are refused: ${allowanceReason(included)}. Unsubscribe or delete contacts, or ask the operator to raise contacts_included.`,
    { status: 403, details: { contacts_included: included, billable_contacts: billable } },
  );
}

/**
 * After a new contact's row (and its topic choices) is written in `trx`, under lockAllowance: refuses it (403,
 * rolling the transaction back) when it is billable and makes the team's billable contacts exceed the allowance;
 * otherwise records the period's peak. A contact that is not billable (unsubscribed, suppressed, no topic) is never
 * refused.
 */
export async function admitNewContact(trx: Knex, teamId: string, included: number, email: string): Promise<void> {
  if (included === 0) return;
  if (!(await billableAmong(trx, teamId, [email])).size) return;
  const billable = await billableCount(trx, teamId);
  if (billable > included) throw allowanceError(included, billable - 1);
  await recordPeak(trx, teamId, billable);
}
