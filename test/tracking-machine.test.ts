// The machine rules the tracking listener applies to a request alone (shared/tracking/machine.ts), each with the
// requests it must catch and the ones it must leave to people. The time rules (a hit before the recipient's delivery
// was recorded, or within TRACKING_MACHINE_WINDOW_SECONDS of it) are tested end to end in tracking.test.ts.
import test from 'ava';
import { machineRule, MACHINE_RULES } from '../shared/tracking/machine.ts';

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const person = { method: 'GET', userAgent: CHROME, ip: '203.0.113.7' };

const CASES: [rule: string | null, request: Partial<typeof person>, why: string][] = [
  [null, {}, 'a browser'],
  [
    null,
    {
      userAgent:
        'Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/42.0.2311.135 Safari/537.36 Edge/12.246 GoogleImageProxy',
    },
    "Gmail's image proxy fetches when a person opens",
  ],
  [
    null,
    { userAgent: 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html' },
    "Yahoo's proxy fetches on open",
  ],
  [
    null,
    { userAgent: 'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17328; Pro)' },
    "a person's Outlook",
  ],
  [
    null,
    {
      userAgent:
        'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
    },
    'Apple Mail on an iPhone, privacy protection off',
  ],
  [null, { ip: '18.0.0.1' }, 'next to Apple, not Apple'],
  ['head_request', { method: 'HEAD' }, 'a link checker reads the headers only'],
  ['no_user_agent', { userAgent: '' }, 'no client of a person sends none'],
  ['no_user_agent', { userAgent: '   ' }, 'blank'],
  ['apple_privacy_proxy', { userAgent: 'Mozilla/5.0' }, 'the bare user agent of the MPP proxies'],
  ['apple_privacy_proxy', { ip: '17.58.101.20' }, "Apple's 17.0.0.0/8"],
  ['apple_privacy_proxy', { ip: '::ffff:17.1.2.3' }, 'the same, IPv4-mapped'],
  ['apple_privacy_proxy', { ip: '2620:149:a0c::1' }, "Apple's IPv6"],
  [
    'bot_user_agent',
    { userAgent: 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)' },
    'a crawler',
  ],
  ['bot_user_agent', { userAgent: 'Barracuda Sentinel (EE)' }, 'a mail security scanner'],
  [
    'bot_user_agent',
    {
      userAgent:
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36',
    },
    'a headless browser scanning links',
  ],
  ['bot_user_agent', { userAgent: 'Microsoft Office Existence Discovery' }, 'Office checking a link exists'],
  ['bot_user_agent', { userAgent: 'curl/8.5.0' }, 'curl'],
  ['bot_user_agent', { userAgent: 'python-requests/2.31.0' }, 'a script'],
  ['bot_user_agent', { userAgent: 'Go-http-client/1.1' }, 'a Go program'],
  ['bot_user_agent', { userAgent: 'facebookexternalhit/1.1' }, 'a link preview'],
  ['head_request', { method: 'HEAD', userAgent: 'curl/8.5.0' }, 'the first rule that matches names it'],
];

test('each machine rule catches its requests and leaves people alone', (t) => {
  for (const [rule, request, why] of CASES) t.is(machineRule({ ...person, ...request }), rule, why);
});

test('every rule has an example here', (t) => {
  const covered = new Set(CASES.map(([rule]) => rule));
  for (const rule of MACHINE_RULES) t.true(covered.has(rule.name), rule.name);
});
