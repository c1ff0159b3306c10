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

function fieldErrors(issues: z.core.$ZodIssue[]): FieldError[] {
  return issues.map((i) => ({ path: i.path.map(String).join('.') || '(body)', message: i.message }));
}

/** Path parameters that do not parse (a malformed UUID) name nothing that exists: 404, never 500. */
export function parseParams<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw notFound(what);
  return r.data;
}

export function parseQuery<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) {
    const errors = fieldErrors(r.error.issues);
    throw new ServiceError('validation_error', `Invalid query parameter \`${errors[0].path}\`: ${errors[0].message}`, { errors });
  }
  return r.data;
}

/** Resend's convention: a body missing only required fields says `missing_required_field`. */
export function parseBody<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const errors = fieldErrors(r.error.issues);
  const missing = r.error.issues.filter((i) => i.path.length > 0 && valueAt(input, i.path) === undefined);
  if (missing.length === r.error.issues.length && input && typeof input === 'object') {
    throw new ServiceError('missing_required_field', `Missing \`${errors[0].path}\` field.`, { errors });
  }
  throw new ServiceError('validation_error', `Invalid \`${errors[0].path}\`: ${errors[0].message}`, { errors });
}
