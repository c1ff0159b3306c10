// HTTP tools for tests that need more than Platform.request: a second app on the same deps, requests node's
// fetch cannot make (no User-Agent, a chunked body, bytes that break the protocol), and leak checks.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { ExecutionContext } from 'ava';
import { parseJson as parse, requestAt, type RequestOptions, type TestResponse } from './request.ts';

export interface Served {
  url: string;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

/** Listens on a random loopback port. */
export async function serve(app: Koa): Promise<Served> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    request: (method, p, o) => requestAt(url, method, p, o),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

export interface NodeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

/**
 * node:http adds no header of its own (fetch adds `user-agent: node`). `chunks` are written one by one with
 * chunked transfer encoding (no Content-Length) unless the caller sets one; writing stops once the answer
 * has arrived.
 */
export function nodeRequest(
  url: string,
  o: { method: string; path: string; headers?: Record<string, string>; chunks?: Buffer[] },
): Promise<NodeResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url + o.path, { method: o.method, headers: o.headers ?? {}, agent: false });
    let answered = false;
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parse(text), text });
        req.destroy();
      });
      res.on('error', reject);
    });
    const chunks = [...(o.chunks ?? [])];
    const writeNext = () => {
      if (answered || req.destroyed) return;
      const chunk = chunks.shift();
      if (!chunk) {
        req.end();
        return;
      }
      req.write(chunk, () => setImmediate(writeNext));
    };
    writeNext();
  });
}

/**
 * Sends `payload` as is on a fresh socket and returns everything the server wrote until it closed. An array is
 * written part by part, and writing stops as soon as the server answers: a server that refuses a body early
 * may reset the connection under a client still writing, after its answer has arrived.
 */
export function rawHttp(url: string, payload: string | string[]): Promise<string> {
  const { hostname, port } = new URL(url);
  const queue = [payload].flat();
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const parts: Buffer[] = [];
    let failure: Error | undefined;
    socket.setTimeout(5000, () => {
      failure = new Error(`no close within 5 s; got: ${Buffer.concat(parts).toString('latin1')}`);
      socket.destroy();
    });
    socket.on('data', (c: Buffer) => parts.push(c));
    socket.on('error', (err) => (failure ??= err));
    socket.on('close', () => {
      if (parts.length === 0 && failure) reject(failure);
      else resolve(Buffer.concat(parts).toString('latin1'));
    });
    const writeNext = () => {
      const next = queue.shift();
      if (next === undefined || parts.length > 0 || socket.destroyed) return;
      socket.write(next, 'latin1', (err) => {
        if (!err) setImmediate(writeNext);
      });
    };
    writeNext();
  });
}

/** The first response in `text` (as rawHttp returns it), read by its Content-Length. */
export function parseHttp(text: string): NodeResponse {
  const split = text.indexOf('\r\n\r\n');
  const lines = text.slice(0, split).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1] ?? 0);
  const headers: http.IncomingHttpHeaders = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = Buffer.from(text.slice(split + 4), 'latin1')
    .subarray(0, length)
    .toString('utf8');
  return { status, headers, body: parse(body), text: body };
}

/** What our internals look like when they leak: a stack frame with a file path, or SQL. */
export function leaks(text: string): string[] {
  const found: string[] = [];
  // `at fn (/path/file.ts:12:5)`, `at /path/file.js:1:2`, `at node:internal/...:3:4`
  const frame = /\bat (?:[^\s()]+ \()?(?:file:\/\/)?(?:\/|[A-Za-z]:\\|node:)[^\s()]*:\d+:\d+\)?/;
  if (frame.test(text) || /node:internal|node_modules|\.tsx?:\d+:\d+/.test(text)) found.push('stack trace');
  if (/\b(select|insert into|update|delete from)\b[\s\S]{0,200}\b(from|where|set|values|returning)\b/i.test(text))
    found.push('SQL');
  if (
    /\b(relation|column) "[^"]+" does not exist|syntax error at or near|violates (unique|foreign key|check) constraint/i.test(
      text,
    )
  )
    found.push('PostgreSQL error');
  return found;
}

/**
 * Resolves within the first 100 ms of the next wall-clock second (never the current one, whose window may
 * already hold requests), for fixed-window tests.
 */
export async function startOfSecond(): Promise<void> {
  const current = Math.floor(Date.now() / 1000);
  for (;;) {
    const now = Date.now();
    if (Math.floor(now / 1000) > current && now % 1000 < 100) return;
    await new Promise((r) => setTimeout(r, 1000 - (now % 1000) + 1));
  }
}

/** Anything with a status, a parsed body, its text and a header getter (fetch's Response or a NodeResponse). */
export type Answer = Pick<TestResponse, 'status' | 'body' | 'text'> & { headers: { get(name: string): string | null } };

export function fromNode(res: NodeResponse): Answer {
  return { ...res, headers: { get: (name: string) => [res.headers[name.toLowerCase()]].flat()[0] ?? null } };
}

/** The Error shape, with statusCode equal to the HTTP status, nosniff, and nothing of our internals. */
export function isError(t: ExecutionContext, res: Answer, status: number, name: string): void {
  t.is(res.status, status, res.text);
  t.is(res.body?.statusCode, status);
  t.is(res.body?.name, name);
  t.is(typeof res.body?.message, 'string');
  t.true(res.body?.message?.length > 0);
  t.is(res.headers.get('x-content-type-options'), 'nosniff');
  t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
  t.deepEqual(leaks(res.text), []);
}
