// The fields of a template as a client writes them, checked one by one: each problem is a 422 naming its field.
import { newId, isUuid } from '../ids.ts';
import { ServiceError } from '../errors.ts';
import { AddressError, formatMailbox, parseMailbox } from '../emails/addresses.ts';
import {
  KEY_PATTERN,
  MAX_VARIABLES,
  RESERVED_KEYS,
  valueProblem,
  type TemplateVariable,
  type VariableType,
  type VariableValue,
} from './variables.ts';

export const MAX_REPLY_TO = 50;

export interface VariableInput {
  key: string;
  type: VariableType;
  fallback_value?: VariableValue | null;
}

export function fieldError(path: string, message: string): ServiceError {
  return new ServiceError('validation_error', `Invalid \`${path}\`: ${message}.`, { errors: [{ path, message }] });
}

/** An alias never looks like an id, so `{id_or_alias}` names one template. */
export function checkAlias(alias: string | null | undefined): void {
  if (alias && isUuid(alias)) throw fieldError('alias', 'must not look like an id (a UUID)');
}

/**
 * A sender as a send takes it (`you@example.com` or `Name <you@example.com>`), formatted; its domain is checked
 * by the send.
 */
export function checkFrom(from: string | null | undefined): string | null | undefined {
  if (from === null || from === undefined) return from;
  try {
    return formatMailbox(parseMailbox(from));
  } catch (err) {
    if (err instanceof AddressError) throw fieldError('from', `\`${from}\` ${err.message}`);
    throw err;
  }
}

export function checkReplyTo(value: string | string[] | null | undefined): string[] | null | undefined {
  if (value === null || value === undefined) return value;
  const list = Array.isArray(value) ? value : [value];
  if (list.length > MAX_REPLY_TO) throw fieldError('reply_to', `at most ${MAX_REPLY_TO} addresses`);
  return list.map((v, i) => {
    try {
      return formatMailbox(parseMailbox(v));
    } catch (err) {
      if (err instanceof AddressError)
        throw fieldError(Array.isArray(value) ? `reply_to.${i}` : 'reply_to', `\`${v}\` ${err.message}`);
      throw err;
    }
  });
}

/** One line of at most 998 characters, as a send's subject (its variables may lengthen it at send). */
export function checkSubject(subject: string | null | undefined): void {
  if (subject === null || subject === undefined) return;
  if (/[\r\n]/.test(subject)) throw fieldError('subject', 'must be one line');
  if (subject.length > 998) throw fieldError('subject', 'must be at most 998 characters');
}

/**
 * The declared variables as stored: each checked (key, not reserved, unique; fallback of its type). A variable
 * whose key and type are unchanged keeps its id and creation time.
 */
export function checkVariables(inputs: VariableInput[], previous: TemplateVariable[], now: string): TemplateVariable[] {
  if (inputs.length > MAX_VARIABLES) throw fieldError('variables', `at most ${MAX_VARIABLES} variables`);
  const seen = new Set<string>();
  return inputs.map((v, i) => {
    if (!KEY_PATTERN.test(v.key))
      throw fieldError(`variables.${i}.key`, 'must be a letter then up to 49 letters, digits or underscores');
    if (RESERVED_KEYS.has(v.key)) throw fieldError(`variables.${i}.key`, `\`${v.key}\` is a reserved name`);
    if (seen.has(v.key)) throw fieldError(`variables.${i}.key`, `\`${v.key}\` is declared twice`);
    seen.add(v.key);
    const fallback = v.fallback_value ?? null;
    const problem = fallback === null ? null : valueProblem(v.type, fallback);
    if (problem) throw fieldError(`variables.${i}.fallback_value`, `${problem} (the variable is a ${v.type})`);
    const old = previous.find((p) => p.key === v.key && p.type === v.type);
    const same = old && JSON.stringify(old.fallback_value) === JSON.stringify(fallback);
    return {
      id: old?.id ?? newId(),
      key: v.key,
      type: v.type,
      fallback_value: fallback,
      created_at: old?.created_at ?? now,
      updated_at: same ? old.updated_at : now,
    };
  });
}
