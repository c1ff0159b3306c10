import { v7 as uuidv7, validate, version } from 'uuid';

/** UUID v7: ids sort by creation time, so list cursors are plain id comparisons. */
export function newId(): string {
  return uuidv7();
}

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && validate(value);
}

export function isUuidV7(value: unknown): value is string {
  return isUuid(value) && version(value) === 7;
}

/** When a UUID v7 was made (its first 48 bits: Unix milliseconds, RFC 9562 §5.7); null for another id. */
export function idTime(id: string): number | null {
  return isUuidV7(id) ? parseInt(id.slice(0, 8) + id.slice(9, 13), 16) : null;
}
