// The network half of the checks, off unless the operator turns it on (CHECKS_NETWORK): each http(s) link is asked
// whether it answers (HEAD, then GET when HEAD is not allowed), each http(s) image how large it is. The customer
// names these URLs, so the same guards as attachments by `path` apply (shared/emails/fetch-attachment.ts): the host
// resolved once, private, loopback and link-local addresses refused (CHECKS_NETWORK_ALLOW_PRIVATE_TARGETS lifts
// it for tests), the connection made to the checked address, no redirect followed, no body read, and every request
// bounded by CHECKS_NETWORK_TIMEOUT_MS. At most MAX_PROBES URLs a run, PROBE_CONCURRENCY at a time.
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { resolveServer, type AddressResolver } from '../dns/server-address.ts';
import type { Config } from '../config.ts';
import type { Probe } from './rules.ts';

export const MAX_PROBES = 20;
const PROBE_CONCURRENCY = 4;

export interface NetworkOptions {
  resolver: AddressResolver;
  timeoutMs: number;
  allowPrivate: boolean;
}

/** The options of the network checks, or null when the operator left them off. */
export function networkOptions(config: Config, resolver: AddressResolver): NetworkOptions | null {
  if (!config.CHECKS_NETWORK) return null;
  return {
    resolver,
    timeoutMs: config.CHECKS_NETWORK_TIMEOUT_MS,
    allowPrivate: config.CHECKS_NETWORK_ALLOW_PRIVATE_TARGETS,
  };
}

function request(url: URL, address: string, method: 'HEAD' | 'GET', timeoutMs: number): Promise<Probe> {
  const lookup: LookupFunction = (_host, opts, cb) => {
    const family = isIP(address);
    if ((opts as { all?: boolean }).all)
      (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  return new Promise((resolve) => {
    const transport = url.protocol === 'https:' ? https : http;
    const req = transport.request(url, {
      method,
      lookup,
      agent: false,
      headers: { 'user-agent': 'postwerk-checks', accept: '*/*', 'accept-encoding': 'identity' },
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ status: null, bytes: null, problem: 'timeout' });
    }, timeoutMs);
    req.on('error', () => {
      clearTimeout(timer);
      resolve({ status: null, bytes: null, problem: 'unreachable' });
    });
    req.on('response', (res) => {
      clearTimeout(timer);
      const length = Number(res.headers['content-length']);
      resolve({ status: res.statusCode ?? null, bytes: Number.isFinite(length) ? length : null, problem: null });
      req.destroy();
    });
    req.end();
  });
}

async function probe(href: string, o: NetworkOptions): Promise<Probe> {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return { status: null, bytes: null, problem: 'unreachable' };
  }
  const resolved = await resolveServer(o.resolver, url.hostname, o.allowPrivate);
  if (resolved.status === 'private') return { status: null, bytes: null, problem: 'private_target' };
  if (resolved.status === 'not_found') return { status: null, bytes: null, problem: 'unreachable' };
  const head = await request(url, resolved.addresses[0], 'HEAD', o.timeoutMs);
  if (head.status === 405 || head.status === 501) return request(url, resolved.addresses[0], 'GET', o.timeoutMs);
  return head;
}

/** What each http(s) URL answered (the first MAX_PROBES distinct ones). */
export async function probeAll(urls: string[], o: NetworkOptions): Promise<Map<string, Probe>> {
  const todo = [...new Set(urls.filter((u) => /^https?:\/\//i.test(u)))].slice(0, MAX_PROBES);
  const out = new Map<string, Probe>();
  let next = 0;
  const lane = async () => {
    while (next < todo.length) {
      const url = todo[next++];
      out.set(url, await probe(url, o));
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROBE_CONCURRENCY, todo.length) }, lane));
  return out;
}
