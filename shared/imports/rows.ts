// One row of an import's file read as a contact, by the import's column map (pure: no I/O). A row that cannot be a
// contact is a failure with a reason naming the column or property; what the row leaves empty it does not set.
import { contactAddress } from '../contacts/address.ts';
import { valueProblem, type PropertyValue } from '../contacts/property-values.ts';
import type { ColumnMap } from './column-map.ts';

/** As the API takes a contact's names (api/routes/contact-schemas.ts). */
export const NAME_MAX_LENGTH = 256;

export interface ImportedContact {
  email: string;
  first_name: string | null;
  last_name: string | null;
  /** null: the row does not say (a new contact is subscribed, an existing one keeps its flag). */
  unsubscribed: boolean | null;
  /** true: the row says never_subscribed (stored so); false: it says subscribed; null: it does not say. */
  never_subscribed?: boolean | null;
  /** Values the row gives, by key. */
  properties: Record<string, PropertyValue>;
}

export type RowResult = { contact: ImportedContact } | { failure: { email: string | null; reason: string } };

const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0']);
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const STATUSES = ['subscribed', 'unsubscribed', 'never_subscribed'] as const;

function flag(cell: string): boolean | null | undefined {
  const v = cell.trim().toLowerCase();
  if (v === '') return null;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  return undefined;
}

/** A cell as the property's type: the value, null when empty, or why it cannot be. */
function propertyValue(
  cell: string,
  type: 'string' | 'number' | 'boolean',
): PropertyValue | null | { problem: string } {
  if (cell.trim() === '') return null;
  let value: PropertyValue;
  if (type === 'string') {
    if (cell.includes('\u0000')) return { problem: 'holds a NUL character' };
    value = cell; // as given: a formula-like text is stored inert, never evaluated
  } else if (type === 'number') {
    if (!NUMBER.test(cell.trim())) return { problem: `must be a number (the property's type is number)` };
    value = Number(cell.trim());
  } else {
    const b = flag(cell);
    if (typeof b !== 'boolean') return { problem: `must be true or false (the property's type is boolean)` };
    value = b;
  }
  const problem = valueProblem(type, value);
  return problem ? { problem } : value;
}

/** A name cell: trimmed, null when empty, or why it cannot be a name. */
function name(cell: string): string | null | { problem: string } {
  const v = cell.trim();
  if (v.length > NAME_MAX_LENGTH) return { problem: `is longer than ${NAME_MAX_LENGTH} characters` };
  // PostgreSQL's text cannot hold U+0000 (valid UTF-8, so the upload's check lets it through).
  if (v.includes('\u0000')) return { problem: 'holds a NUL character' };
  return v || null;
}

/** `full_name` split at its first space: "Ann Marie Lee" is first name "Ann", last name "Marie Lee". */
export function splitFullName(full: string): { first: string | null; last: string | null } {
  const v = full.trim();
  const space = v.indexOf(' ');
  if (space < 0) return { first: v || null, last: null };
  return { first: v.slice(0, space), last: v.slice(space + 1).trim() || null };
}

const cellOf = (record: string[], i: number | null) => (i === null ? '' : (record[i] ?? ''));
/** A cell quoted in a reason: at most 60 characters of it. */
const shown = (v: string) => `\`${v.length > 60 ? `${v.slice(0, 60)}...` : v}\``;
const failure = (raw: string, reason: string): RowResult => ({ failure: { email: raw || null, reason } });

function readNames(record: string[], map: ColumnMap, columns: string[]) {
  const out: (string | null)[] = [];
  for (const field of ['first_name', 'last_name', 'full_name'] as const) {
    const v = name(cellOf(record, map[field]));
    if (v !== null && typeof v === 'object') return `has a \`${columns[map[field]!]}\` that ${v.problem}`;
    out.push(v);
  }
  const [first, last, full] = out;
  if (full === null) return { first, last };
  const split = splitFullName(full);
  return { first: first ?? split.first, last: last ?? split.last };
}

/**
 * The row's `unsubscribed` and `never_subscribed` from its two columns: never more subscribed than either says (each
 * null when the row does not say); a string: why the row fails.
 */
function readSubscription(record: string[], map: ColumnMap, columns: string[]): Subscription | string {
  const unsubscribedCell = cellOf(record, map.unsubscribed);
  const unsubscribed = flag(unsubscribedCell);
  if (unsubscribed === undefined)
    return `has ${shown(unsubscribedCell.trim())} in \`${columns[map.unsubscribed!]}\` (true or false)`;
  const statusCell = cellOf(record, map.subscription_status).trim();
  const status = statusCell.toLowerCase();
  if (status !== '' && !(STATUSES as readonly string[]).includes(status))
    return `has ${shown(statusCell)} in \`${columns[map.subscription_status!]}\` (subscribed, unsubscribed or never_subscribed)`;
  if (unsubscribed === true || status === 'unsubscribed') return { unsubscribed: true, never_subscribed: null };
  // Never subscribed is not unsubscribed from everything: the contact keeps its flag (false when new).
  if (status === 'never_subscribed') return { unsubscribed: null, never_subscribed: true };
  if (unsubscribed === false || status === 'subscribed') return { unsubscribed: false, never_subscribed: false };
  return { unsubscribed: null, never_subscribed: null };
}

type Subscription = Pick<ImportedContact, 'unsubscribed' | 'never_subscribed'>;

/**
 * The row's contact, or why it fails. `columns` names the header's columns (for the reasons). `subscription_status`
 * and `unsubscribed` together never make a row more subscribed than either says.
 */
export function readRow(record: string[], map: ColumnMap, columns: string[]): RowResult {
  const raw = cellOf(record, map.email).trim();
  if (record.length > columns.length)
    return failure(raw, `has ${record.length} fields; the header row has ${columns.length} columns`);
  if (raw === '') return failure(raw, `has no address in the column \`${columns[map.email]}\``);
  const parsed = contactAddress(raw);
  if ('problem' in parsed) return failure(raw, `has an address that is not usable: it ${parsed.problem}`);
  const names = readNames(record, map, columns);
  if (typeof names === 'string') return failure(raw, names);
  const subscription = readSubscription(record, map, columns);
  if (typeof subscription === 'string') return failure(raw, subscription);
  const properties: Record<string, PropertyValue> = {};
  for (const p of map.properties) {
    const v = propertyValue(cellOf(record, p.column), p.type);
    if (v === null) continue;
    if (typeof v === 'object') return failure(raw, `has a value for the property \`${p.key}\` that ${v.problem}`);
    properties[p.key] = v;
  }
  return {
    contact: { email: parsed.address, first_name: names.first, last_name: names.last, ...subscription, properties },
  };
}
