import type { z } from 'zod';
import { notFound, ServiceError, type FieldError } from '../../shared/errors.ts';

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let cur: unknown = input;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

// PostgreSQL's text and jsonb cannot hold U+0000, and no UTF-8 encodes an unpaired UTF-16 surrogate (JSON's
// `"\ud800"` parses to one): such a string would fail its statement and answer 500. One rule for every string
// the API takes, in a body, a query or a path, at any depth (keys too): refused before any handler sees it.
// eslint-disable-next-line no-control-regex -- the NUL is what this looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_MESSAGE = 'must not contain a NUL character (U+0000) or an unpaired UTF-16 surrogate';

/** The paths of the strings in `input` that PostgreSQL cannot store. */
export function unstorableStrings(input: unknown, path: string[] = [], depth = 0): FieldError[] {
  const at = (p: string[]) => p.join('.') || '(body)';
  if (typeof input === 'string') return UNSTORABLE.test(input) ? [{ path: at(path), message: UNSTORABLE_MESSAGE }] : [];
  if (input === null || typeof input !== 'object' || depth > 64) return [];
  const out: FieldError[] = [];
  for (const [k, v] of Object.entries(input)) {
    if (UNSTORABLE.test(k)) out.push({ path: at([...path, k]), message: `is a key that ${UNSTORABLE_MESSAGE}` });
    else out.push(...unstorableStrings(v, [...path, k], depth + 1));
  }
  return out;
}

function refuseUnstorable(input: unknown, what: string): void {
  const errors = unstorableStrings(input);
  if (errors.length)
    throw new ServiceError('validation_error', `Invalid ${what}\`${errors[0].path}\`: ${errors[0].message}.`, {
      errors,
    });
}

function fieldErrors(issues: z.core.$ZodIssue[]): FieldError[] {
  return issues.map((i) => ({ path: i.path.map(String).join('.') || '(body)', message: i.message }));
}

/**
 * Path parameters that do not parse (a malformed UUID, a NUL): 422 invalid_parameter naming the parameter (Resend's
 * answer to an id that is not a UUID), never 500. A well-formed id that names nothing is the handler's 404. With
 * `notFound` (the public files and pages, which answer one 404 for everything they do not serve) that 404 instead.
 */
export function parseParams<S extends z.ZodType>(
  schema: S,
  input: unknown,
  options: { notFound?: string } = {},
): z.output<S> {
  const unstorable = unstorableStrings(input);
  const r = unstorable.length ? null : schema.safeParse(input);
  if (r?.success) return r.data;
  if (options.notFound !== undefined) throw notFound(options.notFound);
  if (!r)
    throw new ServiceError('invalid_parameter', `The \`${unstorable[0].path}\` in the path ${UNSTORABLE_MESSAGE}.`, {
      errors: unstorable,
    });
  const [first] = r.error.issues;
  const name = first.path.map(String).join('.');
  const message =
    first.code === 'invalid_format' && first.format === 'uuid'
      ? `The \`${name}\` in the path must be a valid UUID.`
      : `The \`${name}\` in the path is not valid: ${first.message}.`;
  throw new ServiceError('invalid_parameter', message, { errors: fieldErrors(r.error.issues) });
}

/** The unstorable rule applies to what the schema keeps: a route may turn a bad value into its own refusal. */
export function parseQuery<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) refuseUnstorable(r.data, 'query parameter ');
  if (!r.success) {
    const errors = fieldErrors(r.error.issues);
    throw new ServiceError('validation_error', `Invalid query parameter \`${errors[0].path}\`: ${errors[0].message}`, {
      errors,
    });
  }
  return r.data;
}

/** Resend's convention: a body missing only required fields says `missing_required_field`. */
export function parseBody<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  refuseUnstorable(input, '');
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const errors = fieldErrors(r.error.issues);
  const missing = r.error.issues.filter((i) => i.path.length > 0 && valueAt(input, i.path) === undefined);
  if (missing.length === r.error.issues.length && input && typeof input === 'object') {
    throw new ServiceError('missing_required_field', `Missing \`${errors[0].path}\` field.`, { errors });
  }
  throw new ServiceError('validation_error', `Invalid \`${errors[0].path}\`: ${errors[0].message}`, { errors });
}
