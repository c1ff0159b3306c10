// One POST to a customer's endpoint, guarded against SSRF: the name is resolved first, every address checked
// (unless WEBHOOK_ALLOW_PRIVATE_TARGETS), and the request connects to the checked address, so a name that
// rebinds between check and connect reaches nothing new. Redirects are not followed (a 3xx is a failure); the
// response body is read up to a small cap; 15 s for the whole exchange.
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { resolveServer, type AddressResolver } from '../dns/server-address.ts';

export const TIMEOUT_MS = 15_000;
export const RESPONSE_CAP_BYTES = 1024;

export type PostOutcome =
  | { ok: true; status: number; response: string }
  | { ok: false; status: number | null; response: string | null; error: string };

export interface PostOptions {
  resolver: AddressResolver;
  allowPrivate: boolean;
  timeoutMs?: number;
}

export async function postSigned(url: string, headers: Record<string, string>, body: string, options: PostOptions): Promise<PostOutcome> {
  const target = new URL(url);
  const resolved = await resolveServer(options.resolver, target.hostname, options.allowPrivate);
  if (resolved.status === 'not_found') return { ok: false, status: null, response: null, error: `target not resolved: ${resolved.error}` };
  if (resolved.status === 'private') return { ok: false, status: null, response: null, error: `target refused: ${target.hostname} resolves to a private, loopback or link-local address` };
  const address = resolved.addresses[0];
  // Connect to the checked address whatever the name resolves to now; Host and SNI still name the host.
  const lookup: LookupFunction = (_host, opts, cb) => {
    const family = isIP(address);
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  return new Promise<PostOutcome>((resolve) => {
    const transport = target.protocol === 'https:' ? https : http;
    const req = transport.request(target, {
      method: 'POST',
      lookup,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'postwerk-webhooks' },
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      resolve({ ok: false, status: null, response: null, error: err.message });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        const response = Buffer.concat(chunks).subarray(0, RESPONSE_CAP_BYTES).toString('utf8');
        if (status >= 200 && status < 300) resolve({ ok: true, status, response });
        else resolve({ ok: false, status, response, error: status >= 300 && status < 400 ? 'redirect not followed' : `HTTP ${status}` });
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        if (size < RESPONSE_CAP_BYTES) chunks.push(chunk);
        size += chunk.length;
        // Enough to show; the rest is not read.
        if (size >= RESPONSE_CAP_BYTES) finish();
      });
      res.on('end', finish);
      res.on('error', finish);
    });
    req.end(body);
  });
}
