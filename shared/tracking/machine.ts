// Which hits on a tracking host are a machine's, not a person's (docs/tracking.md, "Machine opens and clicks"). The
// rules the listener can apply to the request alone are here, as data, each with example requests in
// test/tracking-machine.test.ts; the rules that need the recipient's delivery time (a link scanner fetching every
// link within seconds of delivery) are applied where the hit is recorded (engagement.ts). A machine hit is kept,
// flagged with its rule, and counted nowhere: it fires no webhook and is no open or click of the metrics.
import { BlockList, isIP } from 'node:net';

export interface HitRequest {
  method: string;
  userAgent: string;
  /** The client's address as the listener saw it (before ip.ts shortens it for keeping). */
  ip: string;
}

// Apple Mail Privacy Protection fetches every image of a message through Apple's proxies when the message arrives,
// opened or not: from Apple's own network (17.0.0.0/8, tested in inBlock, and Apple's IPv6 blocks here, as ESPs
// document it), with the bare user agent `Mozilla/5.0`.
const APPLE = new BlockList();
for (const net of ['2620:149::', '2a01:b740::', '2403:300::']) APPLE.addSubnet(net, 32, 'ipv6');

// Link scanners, preview fetchers and HTTP libraries that say what they are. Not here, on purpose: GoogleImageProxy
// and YahooMailProxy (they fetch when a person opens the message), Outlook's `Microsoft Office/16.0 (... Microsoft
// Outlook ...)` (a person's Outlook).
const BOT_AGENT = new RegExp(
  [
    'bot\\b',
    'crawler',
    'spider',
    'slurp',
    'facebookexternalhit',
    'existence discovery',
    'barracuda',
    'mimecast',
    'proofpoint',
    'safelinks',
    'urldefense',
    'headlesschrome',
    'phantomjs',
    '^curl/',
    '^wget/',
    'python-requests',
    'python-urllib',
    'go-http-client',
    '^java/',
    'okhttp',
    'libwww-perl',
    'apache-httpclient',
    '^axios/',
    '^node-fetch',
  ].join('|'),
  'i',
);

/** A rule: its name (what the engagement row keeps as `machine`) and its test. */
export const MACHINE_RULES: { name: string; test: (r: HitRequest) => boolean }[] = [
  // A HEAD request reads the headers only: a link checker, never a person's mail client or browser.
  { name: 'head_request', test: (r) => r.method === 'HEAD' },
  { name: 'no_user_agent', test: (r) => r.userAgent.trim() === '' },
  {
    name: 'apple_privacy_proxy',
    test: (r) => r.userAgent.trim() === 'Mozilla/5.0' || inBlock(APPLE, r.ip),
  },
  { name: 'bot_user_agent', test: (r) => BOT_AGENT.test(r.userAgent) },
];

function inBlock(list: BlockList, ip: string): boolean {
  // IPv4 (plain or mapped) by its first octet: a string test, where BlockList would build an address object per hit.
  const v4 = /^(?:::ffff:)?(\d{1,3})\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.exec(ip);
  if (v4) return v4[1] === '17';
  return isIP(ip) === 6 && list.check(ip, 'ipv6');
}

/** The first machine rule `request` meets, or null: a person's, as far as the request tells. */
export function machineRule(request: HitRequest): string | null {
  return MACHINE_RULES.find((rule) => rule.test(request))?.name ?? null;
}
