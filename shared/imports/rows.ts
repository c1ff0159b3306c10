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
  if (type === 'string')
    value = cell; // as given: a formula-like text is stored inert, never evaluated
  else if (type === 'number') {
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

function name(cell: string | undefined): string | null | { problem: string } {
  const v = (cell ?? '').trim();
  if (v.length > NAME_MAX_LENGTH) return { problem: `is longer than ${NAME_MAX_LENGTH} characters` };
  return v || null;
}

/** `full_name` split at its first space: "Ann Marie Lee" is first name "Ann", last name "Marie Lee". */
export function splitFullName(full: string): { first: string | null; last: string | null } {
  const v = full.trim();
  const space = v.indexOf(' ');
  if (space < 0) return { first: v || null, last: null };
  return { first: v.slice(0, space), last: v.slice(space + 1).trim() || null };
}

/**
 * The row's contact, or why it fails. `columns` names the header's columns (for the reasons). `subscription_status`
 * and `unsubscribed` together never make a row more subscribed than either says.
 */
export function readRow(record: string[], map: ColumnMap, columns: string[]): RowResult {
  const cell = (i: number | null) => (i === null ? '' : (record[i] ?? ''));
  const raw = cell(map.email).trim();
  const fail = (reason: string) => ({ failure: { email: raw || null, reason } });
  if (record.length > columns.length)
    return fail(`has ${record.length} fields; the header row has ${columns.length} columns`);
  if (raw === '') return fail(`has no address in the column \`${columns[map.email]}\``);
  const parsed = contactAddress(raw);
  if ('problem' in parsed) return fail(`has an address that is not usable: it ${parsed.problem}`);

  const names: Record<'first_name' | 'last_name' | 'full_name', string | null> = {
    first_name: null,
    last_name: null,
    full_name: null,
  };
  for (const field of ['first_name', 'last_name', 'full_name'] as const) {
    const v = name(cell(map[field]));
    if (v !== null && typeof v === 'object') return fail(`has a \`${columns[map[field]!]}\` that ${v.problem}`);
    names[field] = v;
  }
  const split = names.full_name === null ? { first: null, last: null } : splitFullName(names.full_name);

  const unsubscribedCell = flag(cell(map.unsubscribed));
  if (unsubscribedCell === undefined)
    return fail(`has \`${cell(map.unsubscribed).trim()}\` in \`${columns[map.unsubscribed!]}\` (true or false)`);
  const statusCell = cell(map.subscription_status).trim().toLowerCase();
  if (statusCell !== '' && !(STATUSES as readonly string[]).includes(statusCell))
    return fail(
      `has \`${cell(map.subscription_status).trim()}\` in \`${columns[map.subscription_status!]}\` (subscribed, unsubscribed or never_subscribed)`,
    );
  let unsubscribed: boolean | null = null;
  if (unsubscribedCell === true || statusCell === 'unsubscribed' || statusCell === 'never_subscribed')
    unsubscribed = true;
  else if (unsubscribedCell === false || statusCell === 'subscribed') unsubscribed = false;

  const properties: [string, PropertyValue][] = [];
  for (const p of map.properties) {
    const v = propertyValue(cell(p.column), p.type);
    if (v === null) continue;
    if (typeof v === 'object') return fail(`has a value for the property \`${p.key}\` that ${v.problem}`);
    properties.push([p.key, v]);
  }
  return {
    contact: {
      email: parsed.address,
      first_name: names.first_name ?? split.first,
      last_name: names.last_name ?? split.last,
      unsubscribed,
      properties: Object.fromEntries(properties),
    },
  };
}
