// What a hit keeps of the client's IP address (TRACKING_IP_ADDRESSES): `truncated` by default, the network without
// the host (IPv4 /24, IPv6 /48, as analytics tools anonymise), enough to tell a country or a provider and not a
// household; `full` (the webhook's `click.ipAddress` as Resend sends it); or `none`. The machine rules (machine.ts)
// read the full address first, in memory; only what this answers is stored or sent in a webhook.
import { isIP } from 'node:net';

export type IpMode = 'truncated' | 'full' | 'none';

export function keptIp(ip: string, mode: IpMode): string | null {
  if (mode === 'none' || !ip) return null;
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.\d+$/i.exec(ip);
  if (mode === 'full') return v4 && ip.includes(':') ? `${v4[1]}.${v4[2]}.${v4[3]}.${ip.split('.').pop()}` : ip;
  if (v4) return `${v4[1]}.${v4[2]}.${v4[3]}.0`;
  if (isIP(ip) !== 6) return null;
  // The first three groups of the expanded address.
  const [head, tail = ''] = ip.toLowerCase().split('::');
  const groups = head ? head.split(':') : [];
  const missing = 8 - groups.length - (tail ? tail.split(':').length : 0);
  const full = [...groups, ...Array(Math.max(0, missing)).fill('0'), ...(tail ? tail.split(':') : [])];
  return `${full
    .slice(0, 3)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::`;
}
