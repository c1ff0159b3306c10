// The return-path label (custom_return_path) carries our MX and SPF. A label whose MX or SPF already belongs
// to another service would take that service's bounces or break its SPF, so it is refused with a suggestion.
import { fqdn } from './names.ts';
import type { Lookup, Mx } from './verdicts.ts';
import { spfValue, type PlatformHosts } from './records.ts';

export interface ReturnPathResolver {
  mx(name: string): Promise<Lookup<Mx>>;
  txt(name: string): Promise<Lookup<string>>;
}

const CANDIDATES = ['send', 'bounces', 'mail', 'email', 'rp', 'outbound'];

const host = (h: string) => h.toLowerCase().replace(/\.$/, '');

/** Another service's MX or SPF at `<label>.<domain>`, or null when the label is free or already ours. */
export async function findReturnPathConflict(
  resolver: ReturnPathResolver,
  domain: string,
  label: string,
  hosts: PlatformHosts,
): Promise<{ type: 'MX' | 'TXT'; value: string } | null> {
  const name = fqdn(label, domain);
  const [mx, txt] = await Promise.all([resolver.mx(name), resolver.txt(name)]);
  if (mx.status === 'ok') {
    const foreign = mx.records.find((r) => host(r.exchange) !== host(hosts.PLATFORM_FEEDBACK_HOST));
    if (foreign) return { type: 'MX', value: `${foreign.priority} ${host(foreign.exchange)}` };
  }
  if (txt.status === 'ok') {
    const foreign = txt.records.find((r) => /^v=spf1(\s|$)/i.test(r.trim()) && r.trim() !== spfValue(hosts));
    if (foreign) return { type: 'TXT', value: foreign };
  }
  // A lookup that failed for now says nothing is there: we do not block a customer on their DNS hiccup.
  return null;
}

/** The first free label among the usual names, then numbered ones (`send2`, `send3`, ...). */
export async function pickReturnPath(
  resolver: ReturnPathResolver,
  domain: string,
  hosts: PlatformHosts,
  trackingSubdomain: string | null,
  exclude?: string,
): Promise<string> {
  const candidates = [...CANDIDATES, ...Array.from({ length: 8 }, (_, i) => `send${i + 2}`)].filter(
    (c) => c !== exclude && c !== trackingSubdomain,
  );
  for (const label of candidates) {
    if (!(await findReturnPathConflict(resolver, domain, label, hosts))) return label;
  }
  return `send-${Date.now().toString(36)}`;
}
