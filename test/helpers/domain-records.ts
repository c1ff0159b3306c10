// A domain's DNS records as the api lists them, and publishing them in the loopback DNS as a customer would.
import type { DnsServer } from './dns-server.ts';

export interface ApiRecord {
  record: string;
  name: string;
  type: string;
  value: string;
  priority?: number;
  status: string;
}

/** Publishes the MX and TXT records of the api's list for `domain` (names relative to it, `@` the domain). */
export function publishRecords(dns: DnsServer, domain: string, records: ApiRecord[]): void {
  for (const r of records) {
    const name = r.name === '@' ? domain : `${r.name}.${domain}`;
    if (r.type === 'MX') dns.set(name, 'MX', [{ exchange: r.value, priority: r.priority! }]);
    if (r.type === 'TXT') dns.set(name, 'TXT', [r.value]);
  }
}
