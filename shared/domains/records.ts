// The DNS records a domain must publish (CONTRACT, "DNS records of a domain"): pure, from its settings.
import type { Config } from '../config.ts';

export type RecordKind = 'SPF' | 'DKIM' | 'Receiving' | 'Tracking' | 'TrackingCAA' | 'BIMI';
export type RecordType = 'MX' | 'TXT' | 'CNAME' | 'CAA';

export interface DesiredRecord {
  record: RecordKind;
  /** Relative to the domain, as a DNS panel asks for it; '@' is the domain itself. */
  name: string;
  type: RecordType;
  value: string;
  priority?: number;
}

export interface DomainSettings {
  custom_return_path: string;
  sending: 'enabled' | 'disabled';
  receiving: 'enabled' | 'disabled';
  receiving_host: string;
  open_tracking: boolean;
  click_tracking: boolean;
  tracking_subdomain: string | null;
  /** Outgoing mail's TLS: STARTTLS when offered (`opportunistic`), or never in the clear (`enforced`). No record. */
  tls: DomainTls;
}

export type DomainTls = 'opportunistic' | 'enforced';

export interface PublishedKey {
  selector: string;
  algorithm: 'rsa' | 'ed25519';
  public_key: string;
}

export type PlatformHosts = Pick<
  Config,
  | 'PLATFORM_SPF_HOST'
  | 'PLATFORM_FEEDBACK_HOST'
  | 'PLATFORM_INBOUND_HOST'
  | 'PLATFORM_TRACKING_HOST'
  | 'TRACKING_CAA_ISSUER'
>;

export function dkimValue(key: PublishedKey): string {
  return `v=DKIM1; k=${key.algorithm}; p=${key.public_key}`;
}

export function spfValue(hosts: PlatformHosts): string {
  return `v=spf1 include:${hosts.PLATFORM_SPF_HOST} ~all`;
}

export function caaValue(hosts: PlatformHosts): string {
  return `0 issue "${hosts.TRACKING_CAA_ISSUER}"`;
}

/** BIMI assertion record at the default selector (draft-brand-indicators-for-message-identification §4.2). */
export function bimiValue(logoUrl: string): string {
  return `v=BIMI1; l=${logoUrl};`;
}

/** `logoUrl`: the domain's brand logo (shared/domains/brand.ts), when it has one. */
export function desiredRecords(
  domain: DomainSettings,
  keys: PublishedKey[],
  hosts: PlatformHosts,
  logoUrl?: string | null,
): DesiredRecord[] {
  const out: DesiredRecord[] = [];
  if (domain.sending === 'enabled') {
    out.push({
      record: 'SPF',
      name: domain.custom_return_path,
      type: 'MX',
      value: hosts.PLATFORM_FEEDBACK_HOST,
      priority: 10,
    });
    out.push({ record: 'SPF', name: domain.custom_return_path, type: 'TXT', value: spfValue(hosts) });
    for (const key of keys)
      out.push({ record: 'DKIM', name: `${key.selector}._domainkey`, type: 'TXT', value: dkimValue(key) });
  }
  if (domain.receiving === 'enabled') {
    out.push({
      record: 'Receiving',
      name: domain.receiving_host,
      type: 'MX',
      value: hosts.PLATFORM_INBOUND_HOST,
      priority: 10,
    });
  }
  if ((domain.open_tracking || domain.click_tracking) && domain.tracking_subdomain) {
    out.push({
      record: 'Tracking',
      name: domain.tracking_subdomain,
      type: 'CNAME',
      value: hosts.PLATFORM_TRACKING_HOST,
    });
    // A CNAME owns its name outright (RFC 1034 §3.6.2), so the CAA that lets our CA issue for the tracking
    // host sits on the domain itself, where CAA lookups climb to (RFC 8659 §3).
    out.push({ record: 'TrackingCAA', name: '@', type: 'CAA', value: caaValue(hosts) });
  }
  if (logoUrl) out.push({ record: 'BIMI', name: 'default._bimi', type: 'TXT', value: bimiValue(logoUrl) });
  return out;
}
