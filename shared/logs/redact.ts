// What a request log keeps of a body: secrets replaced, long strings (attachment content) cut, size bounded.

const SECRET_KEY = /(token|secret|password|passwd|authorization|api[_-]?key|private[_-]?key|signing)/i;
const MAX_STRING = 2048;
const MAX_JSON = 64 * 1024;

function walk(value: unknown, depth: number): unknown {
  if (depth > 20) return '[truncated]';
  if (typeof value === 'string') return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…[${value.length} chars]` : value;
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

/** A JSON-safe, redacted copy of `body`, or null when there is none. */
export function redactBody(body: unknown): unknown {
  if (body === undefined || body === null || body === '') return null;
  const copy = walk(body, 0);
  const text = JSON.stringify(copy);
  if (text === undefined) return null;
  if (text.length > MAX_JSON) return { truncated: true, bytes: text.length };
  return copy;
}
