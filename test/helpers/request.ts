// One way tests talk HTTP to the api: a User-Agent, an optional bearer key and a JSON body, the answer parsed.

export interface RequestOptions {
  key?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  userAgent?: string | null;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

export function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

export async function requestAt(url: string, method: string, p: string, o: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.userAgent !== null) headers['user-agent'] = o.userAgent ?? 'postwerk-tests/1.0';
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  let body: string | Buffer | undefined;
  if (o.rawBody !== undefined) body = o.rawBody;
  else if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url + p, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: parseJson(text), text };
}
