// One POST to a customer's endpoint, guarded against SSRF: the name is resolved first, every address checked
// (unless WEBHOOK_ALLOW_PRIVATE_TARGETS), and the request connects to the checked address, so a name that
// rebinds between check and connect reaches nothing new. Redirects are not followed (a 3xx is a failure); the
// response body is read up to a small cap; 15 s for the whole exchange. Connections are kept alive between
// POSTs when the caller passes agents.
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { resolveServer, type AddressResolver } from '../dns/server-address.ts';

/** The setting that allows private targets, as every refusal of one names it (here and at creation). */
export const PRIVATE_TARGETS_HINT = 'allowed only when the operator sets WEBHOOK_ALLOW_PRIVATE_TARGETS=true';

export const TIMEOUT_MS = 15_000;
export const RESPONSE_CAP_BYTES = 1024;

export type PostOutcome =
  | { ok: true; status: number; response: string }
  | { ok: false; status: number | null; response: string | null; error: string };

export interface PostOptions {
  resolver: AddressResolver;
  allowPrivate: boolean;
  timeoutMs?: number;
  /** Keep-alive agents (createAgents); without them each POST opens and closes its own connection. */
  agents?: Agents;
}

/** Keep-alive agents, one pair per process: a busy endpoint's requests reuse their connection. */
export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

export function createAgents(): Agents {
  const o = { keepAlive: true, maxFreeSockets: 1024 };
  return { http: new http.Agent(o), https: new https.Agent(o) };
}

export type Target = { ok: true; url: URL; address: string } | { ok: false; outcome: PostOutcome };

/** Where `url` points, checked (see the top of the file); resolved once for a run of sends to one endpoint. */
export async function resolveTarget(
  url: string,
  options: Pick<PostOptions, 'resolver' | 'allowPrivate'>,
): Promise<Target> {
  const target = new URL(url);
  const resolved = await resolveServer(options.resolver, target.hostname, options.allowPrivate);
  if (resolved.status === 'not_found')
    return {
      ok: false,
      outcome: { ok: false, status: null, response: null, error: `target not resolved: ${resolved.error}` },
    };
  if (resolved.status === 'private') {
    return {
      ok: false,
      outcome: {
        ok: false,
        status: null,
        response: null,
        error: `target refused: ${target.hostname} resolves to a private, loopback or link-local address (${PRIVATE_TARGETS_HINT})`,
      },
    };
  }
  return { ok: true, url: target, address: resolved.addresses[0] };
}

export async function postSigned(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
): Promise<PostOutcome> {
  const target = await resolveTarget(url, options);
  return target.ok ? postTo(target, headers, body, options) : target.outcome;
}

/** One POST to a checked target. A kept-alive connection the peer closed just as we wrote is retried once, fresh. */
export async function postTo(
  target: Extract<Target, { ok: true }>,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
): Promise<PostOutcome> {
  const first = await attempt(target, headers, body, options);
  return first.stale ? (await attempt(target, headers, body, options)).outcome : first.outcome;
}

function attempt(
  target: Extract<Target, { ok: true }>,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
) {
  const { url, address } = target;
  // Connect to the checked address whatever the name resolves to now; Host and SNI still name the host.
  const lookup: LookupFunction = (_host, opts, cb) => {
    const family = isIP(address);
    if ((opts as { all?: boolean }).all)
      (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  return new Promise<{ outcome: PostOutcome; stale: boolean }>((resolve) => {
    const secure = url.protocol === 'https:';
    const transport = secure ? https : http;
    const agent = options.agents ? (secure ? options.agents.https : options.agents.http) : false;
    const req = transport.request(url, {
      method: 'POST',
      lookup,
      agent,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'postwerk-webhooks',
      },
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const stale = req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
      resolve({ stale, outcome: { ok: false, status: null, response: null, error: err.message } });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        const response = Buffer.concat(chunks).subarray(0, RESPONSE_CAP_BYTES).toString('utf8');
        if (status >= 200 && status < 300) resolve({ stale: false, outcome: { ok: true, status, response } });
        else
          resolve({
            stale: false,
            outcome: {
              ok: false,
              status,
              response,
              error: status >= 300 && status < 400 ? 'redirect not followed' : `HTTP ${status}`,
            },
          });
      };
      res.on('data', (chunk: Buffer) => {
        if (size < RESPONSE_CAP_BYTES) chunks.push(chunk);
        size += chunk.length;
        // Enough to show; the rest is not read (and the connection not kept).
        if (size >= RESPONSE_CAP_BYTES) {
          finish();
          res.destroy();
        }
      });
      res.on('end', finish);
      res.on('error', finish);
      res.on('close', finish);
    });
    req.end(body);
  });
}
