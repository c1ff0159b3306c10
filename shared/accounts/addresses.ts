// An account's address: NFKC-normalised (a full-width `ａ` is `a`), trimmed and lower-cased, so one person has one
// account however the address is typed; then checked as the send path checks addresses (its domain in ASCII).
import { AddressError, parseAddress } from '../emails/addresses.ts';
import { ServiceError } from '../errors.ts';

export function normalizeEmail(value: string, path = 'email'): string {
  const v = value.normalize('NFKC').trim().toLowerCase();
  const refuse = (message: string) =>
    new ServiceError('validation_error', `Invalid \`${path}\`: ${message}.`, { errors: [{ path, message }] });
  if (v.length < 3 || v.length > 320) throw refuse('must be 3-320 characters');
  try {
    return parseAddress(v).address.toLowerCase();
  } catch (err) {
    if (err instanceof AddressError) throw refuse(`\`${value}\` ${err.message}`);
    throw err;
  }
}
