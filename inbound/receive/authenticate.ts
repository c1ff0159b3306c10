// SPF (RFC 7208), DKIM (RFC 6376), DMARC (RFC 7489) and ARC (RFC 8617) verdicts on a received message, with
// mailauth, asking DNS through the project's resolver (DNS_SERVERS). The verdicts are values, never a reason
// to drop or to retry: a DNS failure is a `temperror` verdict, and a message that cannot be authenticated at
// all keeps no verdict. They are kept twice: as an Authentication-Results field (RFC 8601) put in front of the
// stored headers, and as data (received_emails.authentication).
import { authenticate } from 'mailauth';
import type { DnsResolver, DnsResult } from '../../shared/dns/resolver.ts';

export interface AuthenticationVerdicts {
  spf: { result: string; domain: string } | null;
  dkim: { result: string; domain: string | null; selector: string | null; aligned: boolean }[];
  dmarc: { result: string; domain: string; policy: string | null } | null;
  arc: { result: string } | null;
}

export interface Authentication {
  /** The Authentication-Results field, unfolded, as a [name, value] header pair. */
  header: [string, string];
  verdicts: AuthenticationVerdicts;
}

export interface Envelope {
  /** The connecting client's address as the MX saw it ('' when unknown). */
  ip: string;
  helo: string;
  /** MAIL FROM ('' for the null sender: SPF then checks postmaster@<helo>, RFC 7208 §2.4). */
  sender: string;
}

export interface Authenticator {
  /** Ours in Authentication-Results (RFC 8601 §2.5): the MX host name, PLATFORM_INBOUND_HOST. */
  authservId: string;
  authenticate(raw: Buffer, envelope: Envelope): Promise<Authentication>;
}

/** mailauth asks `(name, type)` the way node's dns.resolve does: records, or an error carrying node's code. */
export function mailauthResolver(dns: DnsResolver) {
  const asNode = async <T>(name: string, type: string, pending: Promise<DnsResult<T>>): Promise<T[]> => {
    const res = await pending;
    if (res.status === 'ok') return res.records;
    // ENOTFOUND and ENODATA are "void lookups" to SPF (RFC 7208 §4.6.4); anything else is a temperror.
    const code = res.status === 'nxdomain' ? 'ENOTFOUND' : res.status === 'nodata' ? 'ENODATA' : res.error;
    throw Object.assign(new Error(`${type} ${name}: ${code}`), { code });
  };
  return async (name: string, type: string): Promise<unknown[]> => {
    switch (type.toUpperCase()) {
      // node answers TXT as each record's character-strings; ours are already joined, one string a record.
      case 'TXT':
        return (await asNode(name, type, dns.txt(name))).map((s) => [s]);
      case 'MX':
        return asNode(name, type, dns.mx(name));
      case 'A':
        return asNode(name, type, dns.a(name));
      case 'AAAA':
        return asNode(name, type, dns.aaaa(name));
      case 'PTR':
        return asNode(name, type, dns.ptr(name));
      default:
        throw Object.assign(new Error(`${type} lookups are not made here`), { code: 'ENOTIMP' });
    }
  };
}

const unfold = (field: string) => field.replace(/\r?\n(?=[ \t])/g, '');

/** The authserv-id an Authentication-Results value names (RFC 8601 §2.2), lowercase. */
export function authservIdOf(value: string): string {
  return (
    value
      .replace(/\([^)]*\)/g, ' ')
      .split(';')[0]
      .trim()
      .split(/\s+/)[0]
      ?.toLowerCase() ?? ''
  );
}

/** RFC 8601 §5: a field that already claims our authserv-id was written by someone else, so it goes. */
export function withoutForgedResults(headers: [string, string][], authservId: string): [string, string][] {
  const ours = authservId.toLowerCase();
  return headers.filter(
    ([name, value]) => name.toLowerCase() !== 'authentication-results' || authservIdOf(value) !== ours,
  );
}

export function createAuthenticator(options: { dns: DnsResolver; authservId: string }): Authenticator {
  const resolver = mailauthResolver(options.dns);
  const run = async (raw: Buffer, envelope: Envelope): Promise<Authentication> => {
    const result = await authenticate(raw, {
      ip: envelope.ip || undefined,
      helo: envelope.helo || undefined,
      sender: envelope.sender,
      mta: options.authservId,
      resolver: resolver as never,
      // BIMI is for showing logos, not a verdict on the message; its lookups are left to a client.
      disableBimi: true,
    });
    const field = result.headers.split(/\r\n(?![ \t])/).find((f) => /^authentication-results:/i.test(f));
    if (!field) throw new Error('mailauth wrote no Authentication-Results field');
    return {
      header: ['Authentication-Results', unfold(field.slice(field.indexOf(':') + 1)).trim()],
      verdicts: {
        spf: result.spf ? { result: result.spf.status.result, domain: result.spf.domain } : null,
        dkim: (result.dkim.results ?? []).map((d) => ({
          result: d.status.result,
          domain: d.signingDomain ?? null,
          selector: d.selector ?? null,
          aligned: Boolean(d.status.aligned),
        })),
        dmarc: result.dmarc
          ? { result: result.dmarc.status.result, domain: result.dmarc.domain, policy: result.dmarc.policy ?? null }
          : null,
        arc: result.arc ? { result: result.arc.status.result } : null,
      },
    };
  };
  return { authservId: options.authservId, authenticate: run };
}
