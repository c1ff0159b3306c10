// A contact's address as the API takes it: trimmed, the domain lower case and in its ASCII (IDNA) form, the local
// part as given (RFC 5321 §2.4 leaves its case to the receiving server). Matched without regard to case: a team has
// one contact per address, as it has one set of topic choices and one suppression per address.
import { AddressError, parseAddress } from '../emails/addresses.ts';
import { isUuid } from '../ids.ts';

export const EMAIL_MIN_LENGTH = 3;
export const EMAIL_MAX_LENGTH = 320;

/** The stored form of `value`, or why it is not an address a contact can have. */
export function contactAddress(value: string): { address: string } | { problem: string } {
  const v = value.trim();
  if (v.length < EMAIL_MIN_LENGTH || v.length > EMAIL_MAX_LENGTH)
    return { problem: `must be ${EMAIL_MIN_LENGTH}-${EMAIL_MAX_LENGTH} characters` };
  try {
    return { address: parseAddress(v).address };
  } catch (err) {
    if (err instanceof AddressError) return { problem: err.message };
    throw err;
  }
}

/** `id_or_email` of a path: a UUID names an id, an address an email (normalised), anything else nothing. */
export function contactLookup(idOrEmail: string): { id: string } | { email: string } | null {
  if (isUuid(idOrEmail)) return { id: idOrEmail };
  const parsed = contactAddress(idOrEmail);
  return 'address' in parsed ? { email: parsed.address } : null;
}
