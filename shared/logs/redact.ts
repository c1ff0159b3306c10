// What a request log keeps of a body: secrets replaced, long strings (attachment content) cut, size bounded.

const SECRET_KEY = /(token|secret|password|passwd|authorization|api[_-]?key|private[_-]?key|signing)/i;
const MAX_STRING = 2048;
const MAX_JSON = 64 * 1024;

function walk(value: unknown, depth: number): unknown {
  if (depth > 20) return '[truncated]';
  if (typeof value === 'string')
    return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…[${value.length} chars]` : value;
  if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SECRET_KEY.test(k) && v !== null && v !== undefined && v !== false ? '[redacted]' : walk(v, depth + 1);
    }
    return out;
  }
  return value;
}

/** The redacted body as the JSON text a log row stores (`null` for none), serialised once. */
export function redactJson(body: unknown): string {
  if (body === undefined || body === null || body === '') return 'null';
  const text = JSON.stringify(walk(body, 0));
  if (text === undefined) return 'null';
  return text.length > MAX_JSON ? JSON.stringify({ truncated: true, bytes: text.length }) : text;
}
