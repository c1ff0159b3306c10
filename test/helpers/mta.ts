// The world the MTA's tests deliver in: the platform (PostgreSQL, Redis, blobs), a loopback DNS server that
// answers MX and address records, an SMTP sink on SMTP_DELIVERY_PORT, and the delivery stages wired to them
// with short timeouts.
import { promises as dnsPromises } from 'node:dns';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { startPlatform, type Platform, type TestTeam } from './platform.ts';
import { startDnsServer, type DnsServer } from './dns-server.ts';
import { startSmtpSink, type SinkOptions, type SmtpSink } from './smtp-sink.ts';
import { opendkimVerify, signatureKeys } from './opendkim.ts';
import { createResolver } from '../../shared/dns/resolver.ts';
import { createLogger } from '../../shared/logger.ts';
import { closeDeliveryDeps, createDeliveryDeps, type DeliveryDeps, type DeliveryOptions } from '../../mta/delivery/deps.ts';

export interface MtaWorld {
  p: Platform;
  dns: DnsServer;
  sink: SmtpSink;
  deps: DeliveryDeps;
  /** MX of `domain` → mx.<domain> → `ips` (the sink listens on 127.0.0.1). */
  mx(domain: string, ips?: string[]): void;
  /** A verified sending domain of `team` with its DKIM key published in the DNS. */
  sendingDomain(team: TestTeam, name: string): Promise<{ id: string; name: string; selector: string }>;
  /**
   * DKIM verdicts of a received message by two verifiers, keys read from the loopback DNS: mailauth's status,
   * which stays `pass` only when opendkim-testmsg (libopendkim) passes the same signature too.
   */
  verifyDkim(raw: Buffer): Promise<{ status: string; domain: string; selector: string }[]>;
  /** Delivery stages with other options (a second mta copy); closed with the world. */
  moreDeps(options?: DeliveryOptions): DeliveryDeps;
  close(): Promise<void>;
}

export const TEST_TIMEOUTS = { connect: 2000, greeting: 2000, socket: 1500, transaction: 5000 };

export async function startMtaWorld(options: { sink?: SinkOptions; env?: Record<string, string> } = {}): Promise<MtaWorld> {
  const sink = await startSmtpSink(options.sink);
  const dns = await startDnsServer();
  const p = await startPlatform({ DNS_SERVERS: dns.address, SMTP_DELIVERY_PORT: String(sink.port), MTA_SIGNING_THREADS: '1', ...options.env });
  const log = createLogger(p.config, 'mta');
  // Every lookup of the tests is answered (or refused) at once; the budget is for a busy CI machine.
  const resolver = createResolver({ servers: [dns.address], timeoutMs: 2000, tries: 1 });
  const all: DeliveryDeps[] = [];
  const moreDeps = (o: DeliveryOptions = {}) => {
    const d = createDeliveryDeps(p.config, { db: p.db, blobs: p.deps.blobs, log }, { timeouts: TEST_TIMEOUTS, dns: resolver, ...o });
    all.push(d);
    return d;
  };
  const deps = moreDeps();
  const verifier = new dnsPromises.Resolver();
  verifier.setServers([dns.address]);

  return {
    p, dns, sink, deps, moreDeps,
    mx(domain, ips = ['127.0.0.1']) {
      dns.set(domain, 'MX', [{ exchange: `mx.${domain}`, priority: 10 }]);
      dns.set(`mx.${domain}`, 'A', ips);
    },
    async sendingDomain(team, name) {
      const res = await p.request('POST', '/domains', { key: team.key, body: { name } });
      if (res.status !== 201) throw new Error(`POST /domains answered ${res.status} ${res.text}`);
      await p.db('domains').where({ id: res.body.id }).update({ status: 'verified', verified_at: new Date() });
      const dkim = res.body.records.find((r: { record: string }) => r.record === 'DKIM');
      dns.set(`${dkim.name}.${name}`, 'TXT', [dkim.value]);
      return { id: res.body.id, name, selector: dkim.name.replace(/\._domainkey$/, '') };
    },
    async verifyDkim(raw) {
      const result = await dkimVerify(raw, { resolver: (name: string, rrtype: string) => verifier.resolve(name, rrtype) as Promise<string[][]> });
      // opendkim-testmsg gets the same keys from a DNS server of its own (it can only ask port 53).
      const keys = signatureKeys(raw);
      const records: Record<string, string> = {};
      for (const k of keys) {
        const name = `${k.selector}._domainkey.${k.domain}`;
        records[name] = (await verifier.resolveTxt(name).catch(() => [] as string[][])).map((chunks) => chunks.join(''))[0] ?? '';
      }
      const opendkim = await opendkimVerify(raw, records);
      return result.results.map((r) => {
        const index = keys.findIndex((k) => k.domain === (r.signingDomain ?? '').toLowerCase() && k.selector === r.selector);
        const other = opendkim[index];
        const status = r.status.result === 'pass' && !other?.pass ? `pass by mailauth only; opendkim-testmsg: ${other?.output ?? 'no verdict'}` : r.status.result;
        return { status, domain: r.signingDomain ?? '', selector: r.selector ?? '' };
      });
    },
    async close() {
      await Promise.all(all.map(closeDeliveryDeps));
      await sink.close();
      await dns.close();
      await p.close();
    },
  };
}
