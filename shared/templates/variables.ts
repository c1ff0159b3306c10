// A template's declared variables and the values a send gives them: pure rules. A variable has a key, a type
// (`string`, `number`, `boolean`, `object`, `list`) and an optional fallback of that type, used when a send gives
// no value. A send's value of the wrong type, or no value for a variable the template prints with no fallback, is
// a 422 naming `template.variables.<KEY>`.
import { ServiceError, type FieldError } from '../errors.ts';

export const variableTypes = ['string', 'number', 'boolean', 'object', 'list'] as const;
export type VariableType = (typeof variableTypes)[number];
export type VariableValue = string | number | boolean | Record<string, unknown> | unknown[];

/** A declared variable as the template row keeps it (`variables` jsonb). */
export interface TemplateVariable {
  id: string;
  key: string;
  type: VariableType;
  fallback_value: VariableValue | null;
  created_at: string;
  updated_at: string;
}

/**
 * A letter first, then letters, digits and underscores. A leading underscore is kept for the engine's own helper
 * (`_v`, engine.ts), so no variable can shadow it.
 */
export const KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,49}$/;
export const MAX_VARIABLES = 50;
export const STRING_MAX_LENGTH = 100_000;
/** The values of one send, as JSON: far above any real message, far below what could make rendering costly. */
export const VALUES_MAX_BYTES = 1024 * 1024;

/**
 * Names a template cannot declare: the engine's words (`raw`, `if`, `each`, ...), Handlebars' literals, and the
 * names Resend keeps for a contact's own fields and the unsubscribe link (filled by broadcasts, not by a send).
 */
export const RESERVED_KEYS = new Set([
  'raw',
  'if',
  'unless',
  'each',
  'with',
  'else',
  'this',
  'true',
  'false',
  'null',
  'undefined',
  'FIRST_NAME',
  'LAST_NAME',
  'EMAIL',
  'UNSUBSCRIBE_URL',
  'RESEND_UNSUBSCRIBE_URL',
  'contact',
]);

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Why `value` is not a value of `type`, or null when it is. */
export function valueProblem(type: VariableType, value: unknown): string | null {
  switch (type) {
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      return value.length > STRING_MAX_LENGTH ? `must be at most ${STRING_MAX_LENGTH} characters` : null;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'object':
      return isPlainObject(value) ? null : 'must be an object';
    case 'list':
      return Array.isArray(value) ? null : 'must be a list (a JSON array)';
  }
}

/**
 * The render context of one send: each declared variable's value, else its fallback. `required`: the variables
 * the template prints with no inline fallback (syntax.ts); one of them with neither a value nor a fallback is
 * missing. Values of undeclared keys are ignored. Answers the problems rather than throwing (see bindValues).
 */
export function bind(
  declared: TemplateVariable[],
  given: Record<string, unknown> | undefined,
  required: ReadonlySet<string>,
  prefix = 'template.variables',
): { context: Record<string, unknown>; wrong: FieldError[]; missing: string[] } {
  const values = given ?? {};
  const context: Record<string, unknown> = {};
  const wrong: FieldError[] = [];
  const missing: string[] = [];
  for (const v of declared) {
    const value = Object.hasOwn(values, v.key) ? values[v.key] : undefined;
    if (value === undefined || value === null) {
      if (v.fallback_value !== null) context[v.key] = v.fallback_value;
      else if (required.has(v.key)) missing.push(v.key);
      continue;
    }
    const problem = valueProblem(v.type, value);
    if (problem) wrong.push({ path: `${prefix}.${v.key}`, message: `${problem} (declared as ${v.type})` });
    else context[v.key] = value;
  }
  return { context, wrong, missing };
}

const refuse = (errors: FieldError[]) =>
  new ServiceError('validation_error', `Invalid \`${errors[0].path}\`: ${errors[0].message}.`, { errors });

/** bind, for a send: a missing value or one of the wrong type is a 422 naming every problem. */
export function bindValues(
  declared: TemplateVariable[],
  given: Record<string, unknown> | undefined,
  required: ReadonlySet<string>,
  templateName: string,
): Record<string, unknown> {
  const { context, wrong, missing } = bind(declared, given, required);
  const order = (path: string) => declared.findIndex((v) => path === `template.variables.${v.key}`);
  const errors = [
    ...missing.map((key) => ({
      path: `template.variables.${key}`,
      message: `is required: the template ${templateName} prints it and declares no fallback`,
    })),
    ...wrong,
  ].sort((a, b) => order(a.path) - order(b.path));
  if (errors.length) throw refuse(errors);
  return context;
}

/** bind, for the checks (values at `variables`): a wrong type is still a 422; the missing ones are answered. */
export function bindSample(
  declared: TemplateVariable[],
  given: Record<string, unknown> | undefined,
  required: ReadonlySet<string>,
): { context: Record<string, unknown>; missing: string[] } {
  const { context, wrong, missing } = bind(declared, given, required, 'variables');
  if (wrong.length) throw refuse(wrong);
  return { context, missing };
}

/** The send's values within VALUES_MAX_BYTES (422 naming `template.variables`). */
export function checkValuesSize(given: Record<string, unknown> | undefined): void {
  if (!given) return;
  const size = Buffer.byteLength(JSON.stringify(given));
  if (size > VALUES_MAX_BYTES) {
    const message = `the values are ${size} bytes as JSON; at most ${VALUES_MAX_BYTES}`;
    throw new ServiceError('validation_error', `Invalid \`template.variables\`: ${message}.`, {
      errors: [{ path: 'template.variables', message }],
    });
  }
}
