// The OpenAPI tests' JSON Schema checker (test/openapi.test.ts): a response or an example against the document.
import { isDeepStrictEqual } from 'node:util';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * A deliberately small JSON Schema (2020-12) checker: the keywords zod's converter emits for our schemas, references
 * resolved in `components` (an OpenAPI document's `components.schemas`). The errors, by JSON path; none: it matches.
 */
export function checkSchema(components: Record<string, Json>, schema: Json, value: unknown, at = '$'): string[] {
  const validate = (s: Json, v: unknown, where: string) => checkSchema(components, s, v, where);
  if (schema.$ref) {
    const name = String(schema.$ref).replace('#/components/schemas/', '');
    const target = components[name];
    return target ? validate(target, value, at) : [`${at}: unresolved $ref ${schema.$ref}`];
  }
  const errors: string[] = [];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && !(alternatives as Json[]).some((s) => validate(s, value, at).length === 0))
    errors.push(`${at}: matches none of anyOf/oneOf`);
  for (const s of (schema.allOf ?? []) as Json[]) errors.push(...validate(s, value, at));
  if ('const' in schema && !isDeepStrictEqual(schema.const, value))
    errors.push(`${at}: expected ${JSON.stringify(schema.const)}`);
  if (schema.enum && !(schema.enum as unknown[]).some((e) => isDeepStrictEqual(e, value)))
    errors.push(`${at}: ${JSON.stringify(value)} not in enum`);
  if (schema.type) {
    const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    const ok = types.some(
      (t) => t === actual || (t === 'integer' && Number.isInteger(value)) || (t === 'number' && actual === 'number'),
    );
    if (!ok) return [...errors, `${at}: expected ${types.join('|')}, got ${actual}`];
  }
  if (typeof value === 'string') {
    if (schema.format === 'uuid' && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value))
      errors.push(`${at}: not a uuid`);
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value))) errors.push(`${at}: not a date-time`);
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value))
      errors.push(`${at}: does not match ${schema.pattern}`);
  }
  if (Array.isArray(value) && schema.items)
    value.forEach((v, i) => errors.push(...validate(schema.items, v, `${at}[${i}]`)));
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, Json>;
    for (const r of (schema.required ?? []) as string[]) if (!(r in obj)) errors.push(`${at}.${r}: required`);
    for (const [k, v] of Object.entries(obj)) {
      if (props[k]) errors.push(...validate(props[k], v, `${at}.${k}`));
      else if (schema.additionalProperties === false) errors.push(`${at}.${k}: not allowed`);
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
        errors.push(...validate(schema.additionalProperties, v, `${at}.${k}`));
    }
  }
  return errors;
}
