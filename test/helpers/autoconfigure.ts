// The world of the auto-configure tests: a real RFC 2136 server (BIND's named on loopback) serving `zones`, the
// platform resolving through it (DNS_SERVERS, private servers allowed), and the calls the tests make.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { startPlatform, type Platform, type TestTeam } from './platform.ts';
import { startNamed, type NamedServer } from './named.ts';
import { requestAt } from './request.ts';
import type { ApiRecord } from './domain-records.ts';
import { createApp } from '../../api/app.ts';
import { createResolver, type DnsResolver } from '../../shared/dns/resolver.ts';
import type { Config } from '../../shared/config.ts';

/** The line auto-configure writes for a record of the API's record list. */
export function line(domain: string, r: ApiRecord): string {
  const name = r.name === '@' ? domain : `${r.name}.${domain}`;
  const value = r.type === 'MX' ? `${r.priority} ${r.value}` : r.type === 'TXT' ? `"${r.value}"` : r.value;
  return `${name} ${r.type} ${value}`;
}

/** The api again, on its own port, with some configuration changed (an operator's restart). */
export async function withConfig<T>(
  p: Platform,
  changes: Partial<Config>,
  run: (request: Platform['request']) => Promise<T>,
): Promise<T> {
  const server: Server = createApp({ ...p.deps, config: { ...p.config, ...changes } }).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    return await run((method, path, o) => requestAt(url, method, path, o));
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export interface AutoconfigureWorld {
  named: NamedServer;
  p: Platform;
  /** A resolver asking named directly: what the zones hold now. */
  zone: DnsResolver;
  /** The request's credential for named's update key (`extra` on top). */
  credential(extra?: Record<string, unknown>): Record<string, unknown>;
  createDomain(
    team: TestTeam,
    body: Record<string, unknown>,
  ): Promise<{ id: string; name: string; records: ApiRecord[] }>;
  autoconfigure(team: TestTeam, id: string, body: unknown): ReturnType<Platform['request']>;
  /** The TXT values at `name`, sorted ([] when none). */
  texts(name: string): Promise<string[]>;
  /** The MX records at `name` as `<priority> <exchange>`, sorted. */
  mxs(name: string): Promise<string[]>;
  close(): Promise<void>;
}

/** `zones`: zone name → extra zone-file lines (relative owner names). */
export async function startAutoconfigureWorld(zones: Record<string, string[]>): Promise<AutoconfigureWorld> {
  const named = await startNamed(zones);
  const p = await startPlatform({ DNS_SERVERS: named.address, DNS_UPDATE_ALLOW_PRIVATE: 'true' }).catch(async (err) => {
    await named.close();
    throw err;
  });
  const zone = createResolver({ servers: [named.address], timeoutMs: 1000, tries: 1 });
  return {
    named,
    p,
    zone,
    credential: (extra = {}) => ({
      server: '127.0.0.1',
      port: named.port,
      key_name: named.key.name,
      secret: named.key.secret,
      ...extra,
    }),
    async createDomain(team, body) {
      const res = await p.request('POST', '/domains', { key: team.key, body });
      if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
      return res.body;
    },
    autoconfigure: (team, id, body) => p.request('POST', `/domains/${id}/auto-configure`, { key: team.key, body }),
    async texts(name) {
      const r = await zone.txt(name);
      return r.status === 'ok' ? r.records.sort() : [];
    },
    async mxs(name) {
      const r = await zone.mx(name);
      return r.status === 'ok' ? r.records.map((m) => `${m.priority} ${m.exchange}`).sort() : [];
    },
    async close() {
      await p.close();
      await named.close();
    },
  };
}
