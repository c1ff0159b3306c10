// The values a contact property takes: pure rules, shared by the property's fallback and a contact's values.
import { ServiceError } from '../errors.ts';

export const propertyTypes = ['string', 'number', 'boolean'] as const;
export type PropertyType = (typeof propertyTypes)[number];
export type PropertyValue = string | number | boolean;

/**
 * Letters, digits and underscores: a key is written into templates (`{{{contact.key}}}`) as it is. `__proto__` is
 * refused: a JavaScript object cannot hold it as an ordinary key (zod drops it from a parsed record), so a value
 * under it could never be written or read back.
 */
export const KEY_PATTERN = /^(?!__proto__$)[A-Za-z0-9_]{1,50}$/;
export const KEY_MAX_LENGTH = 50;
export const STRING_VALUE_MAX_LENGTH = 2000;
/** Values one request may write: far above any real form, far below what would make one statement unwieldy. */
export const VALUES_MAX_COUNT = 1000;

/** Why `value` is not a value of a property of `type`, or null when it is. */
export function valueProblem(type: PropertyType, value: unknown): string | null {
  if (type === 'string') {
    if (typeof value !== 'string') return `must be a string (the property's type is string)`;
    if (value.length > STRING_VALUE_MAX_LENGTH) return `must be at most ${STRING_VALUE_MAX_LENGTH} characters`;
    return null;
  }
  if (type === 'number')
    return typeof value === 'number' && Number.isFinite(value)
      ? null
      : `must be a number (the property's type is number)`;
  return typeof value === 'boolean' ? null : `must be true or false (the property's type is boolean)`;
}

/** A 422 naming one field. */
export function fieldError(path: string, message: string): ServiceError {
  return new ServiceError('validation_error', `Invalid \`${path}\`: ${message}.`, { errors: [{ path, message }] });
}
