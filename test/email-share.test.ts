// Share links of sent emails: signed, self-contained tokens; the public read-only JSON view behind them.
import test from 'ava';
import { Resend } from 'resend';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { fromNode, isError, nodeRequest } from './helpers/http.ts';
import {
  DOWNLOAD_LINK_TTL_SECONDS,
  linkKey,
  nowSeconds,
  openLink,
  sealLink,
  signLink,
} from '../shared/links/signed.ts';
import { parseExpiresIn } from '../api/routes/email-share.ts';
import { newId } from '../shared/ids.ts';

const BASE = 'https://mail.example-platform.test';
const DAY = 86_400;

let p: Platform;
test.before(async () => {
  p = await startPlatform({ PUBLIC_BASE_URL: BASE });
});
test.after.always(async () => {
  await p?.close();
});

async function sendOne(team: TestTeam, extra: Record<string, unknown> = {}): Promise<string> {
  const managed = (await p.request('GET', '/domains', { key: team.key })).body.data.find(
    (d: { managed: boolean }) => d.managed,
  ).name;
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `Acme <news@${managed}>`,
      to: `delivered@${p.config.SIMULATOR_DOMAIN}`,
      subject: 'Shared news',
      scheduled_at: 'in 1 hour',
      html: '<p>Hello <script>alert(1)</script><b>there</b></p>',
      text: 'Hello there',
      ...extra,
    },
  });
  if (res.status !== 200) throw new Error(`send failed: ${res.status} ${res.text}`);
  return res.body.id;
}

const local = (url: string) => new URL(url).pathname;
const share = (team: TestTeam, id: string, body?: unknown) =>
  p.request('POST', `/emails/${id}/share`, { key: team.key, body });

test('a share link opens a read-only JSON view of the email, without a key', async (t) => {
  const team = await p.createTeam();
  const id = await sendOne(team);
  const before = nowSeconds();
  const res = await share(team, id);
  t.is(res.status, 200, res.text);
  t.deepEqual(Object.keys(res.body).sort(), ['expires_at', 'id', 'object', 'url']);
  t.like(res.body, { object: 'email', id });
  t.true(res.body.url.startsWith(`${BASE}/share/`));
  const expires = Date.parse(res.body.expires_at) / 1000;
  t.true(expires >= before + 2 * DAY && expires <= nowSeconds() + 2 * DAY, 'default 48 hours');

  for (const prefix of ['', '/api/v1']) {
    const view = await p.request('GET', prefix + local(res.body.url));
    t.is(view.status, 200, view.text);
    t.regex(view.headers.get('content-type') ?? '', /^application\/json/);
    t.is(view.headers.get('cache-control'), 'no-store');
    t.is(view.headers.get('x-content-type-options'), 'nosniff');
    t.regex(view.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    t.is(view.headers.get('referrer-policy'), 'no-referrer');
    const email = (await p.request('GET', `/emails/${id}`, { key: team.key })).body;
    t.deepEqual(view.body, {
      object: 'shared_email',
      id,
      from: email.from,
      to: email.to,
      subject: 'Shared news',
      created_at: email.created_at,
      last_event: 'scheduled',
      text: 'Hello there',
      html: '<p>Hello <script>alert(1)</script><b>there</b></p>',
      expires_at: res.body.expires_at,
    });
  }
  // Nothing else of the email (bcc, headers, tags, message id) is in the view.
  const withBcc = await sendOne(team, {
    bcc: `delivered+secret@${p.config.SIMULATOR_DOMAIN}`,
    tags: [{ name: 'k', value: 'v' }],
  });
  const view = await p.request('GET', local((await share(team, withBcc)).body.url));
  t.false(view.text.includes('secret'));
  t.is(view.body.bcc, undefined);
  t.is(view.body.tags, undefined);
  // The view follows the email: a cancel shows.
  await p.request('POST', `/emails/${id}/cancel`, { key: team.key });
  t.is((await p.request('GET', local(res.body.url))).body.last_event, 'canceled');
});

test('expires_in: `<n> <unit>` from 1 minute to 30 days; anything else is 422', async (t) => {
  const team = await p.createTeam();
  const id = await sendOne(team);
  for (const [expires_in, seconds] of [
    ['10m', 600],
    ['2 hours', 7200],
    ['1 day', DAY],
    ['90 seconds', 90],
    ['1 min', 60],
    ['30 days', 30 * DAY],
    ['2h', 7200],
    [' 3 Weeks ', 21 * DAY],
  ] as const) {
    const before = nowSeconds();
    const res = await share(team, id, { expires_in });
    t.is(res.status, 200, `${expires_in}: ${res.text}`);
    const expires = Date.parse(res.body.expires_at) / 1000;
    t.true(expires >= before + seconds && expires <= nowSeconds() + seconds, expires_in);
    t.is((await p.request('GET', local(res.body.url))).status, 200, expires_in);
  }
  t.is((await share(team, id, { expires_in: null })).status, 200);
  for (const expires_in of [
    '0m',
    '59s',
    '59 seconds',
    '31 days',
    '721h',
    '5 weeks',
    'soon',
    '',
    '10',
    'm',
    '-1 day',
    '1.5 hours',
    '10 parsecs',
    'in 2 hours',
    '1 day 2 hours',
  ]) {
    const res = await share(team, id, { expires_in });
    isError(t, res, 422, 'validation_error');
    t.is(res.body.errors?.[0]?.path, 'expires_in', expires_in);
  }
  isError(t, await share(team, id, { expires_in: 600 }), 422, 'validation_error');
  t.is(parseExpiresIn('10M'), 600);
  t.throws(() => parseExpiresIn('1 fortnight'));
});

test('an expired, tampered or foreign token is the same 404', async (t) => {
  const team = await p.createTeam();
  const otherTeam = await p.createTeam();
  const id = await sendOne(team);
  const foreign = await sendOne(otherTeam);
  const key = linkKey(p.config);
  const token = local((await share(team, id)).body.url).slice('/share/'.length);
  const [payload, signature] = token.split('.');
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const seal = (over: { kind?: string; teamId?: string; objectId?: string; expires?: number }) =>
    sealLink(key, { kind: 'email_share', teamId: team.id, objectId: id, expires: nowSeconds() + 600, ...over });

  const reference = await p.request('GET', `/share/${payload}.${flip(signature, 3)}`);
  isError(t, reference, 404, 'not_found');
  t.is(reference.body.message, 'This link is invalid or has expired.');
  const refusals: [string, string][] = [
    ['tampered payload', `${flip(payload, 10)}.${signature}`],
    ['tampered last character', token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A')],
    ['expired (valid signature)', seal({ expires: nowSeconds() - 1 })],
    ['beyond 30 days (valid signature)', seal({ expires: nowSeconds() + 31 * DAY })],
    ['another kind of link', seal({ kind: 'email_attachment' })],
    [
      'a download token',
      `${payload}.${signLink(key, { kind: 'email_attachment', teamId: team.id, objectId: id, expires: nowSeconds() + DOWNLOAD_LINK_TTL_SECONDS })}`,
    ],
    ['this email under another team', seal({ teamId: otherTeam.id })],
    ["another team's email under this team", seal({ objectId: foreign })],
    ['an unknown email', seal({ objectId: newId() })],
    ['signature only', signature],
    ['payload only', payload],
    ['extra part', `${token}.x`],
    ['garbage', 'not-a-token'],
    ['percent garbage', '%00%FF'],
    ['a uuid', newId()],
    ['long', 'A'.repeat(2000)],
  ];
  for (const [what, value] of refusals) {
    for (const prefix of ['', '/api/v1']) {
      const res = await p.request('GET', `${prefix}/share/${value}`);
      t.is(res.status, 404, `${what}: ${res.text}`);
      t.is(res.text, reference.text, what);
    }
  }
  // The genuine token still opens; one sealed by the module with the same claims is the same link.
  t.is((await p.request('GET', `/share/${token}`)).status, 200);
  t.is((await p.request('GET', `/share/${seal({})}`)).status, 200);
});

test("share of an unknown or another team's email is 404; a key is needed to share, a User-Agent to view", async (t) => {
  const team = await p.createTeam();
  const otherTeam = await p.createTeam();
  const id = await sendOne(team);
  isError(t, await share(otherTeam, id), 404, 'not_found');
  isError(t, await share(team, newId()), 404, 'not_found');
  isError(t, await share(team, 'not-a-uuid'), 422, 'invalid_parameter');
  isError(t, await p.request('POST', `/emails/${id}/share`, { body: {} }), 401, 'missing_api_key');
  const url = (await share(team, id, { expires_in: '10m' })).body.url;
  const bare = fromNode(await nodeRequest(p.url, { method: 'GET', path: local(url) }));
  isError(t, bare, 400, 'validation_error');
  t.regex(bare.body.message, /User-Agent/);
  t.is(
    (await nodeRequest(p.url, { method: 'GET', path: local(url), headers: { 'user-agent': 'browser/1' } })).status,
    200,
  );
});

test('sealLink and openLink carry team, object and expiry; openLink honours now and the kind', (t) => {
  const key = linkKey(p.config);
  const now = new Date('2026-11-22T10:00:00.000Z');
  const claims = { kind: 'email_share', teamId: newId(), objectId: newId(), expires: nowSeconds(now) + 3600 };
  const token = sealLink(key, claims);
  t.regex(token, /^[A-Za-z0-9_-]{51}\.[A-Za-z0-9_-]{43}$/);
  t.deepEqual(openLink(key, 'email_share', token, now, 30 * DAY), claims);
  t.is(openLink(key, 'email_share', token, new Date(claims.expires * 1000), 30 * DAY), null, 'expired at its instant');
  t.is(openLink(key, 'email_attachment', token, now, 30 * DAY), null, 'another kind');
  t.is(openLink(key, 'email_share', token, now), null, 'longer than the default 15 minutes');
  t.is(openLink(Buffer.alloc(32, 7), 'email_share', token, now, 30 * DAY), null, 'another key');
  t.is(openLink(key, 'email_share', undefined, now, 30 * DAY), null);
});

test('the resend SDK lists and gets attachments and shares an email', async (t) => {
  const team = await p.createTeam();
  const id = await sendOne(team, {
    attachments: [{ filename: 'a.txt', content: Buffer.from('sdk bytes').toString('base64') }],
  });
  const resend = new Resend(team.key, { baseUrl: p.url } as never);
  const list = await resend.emails.attachments.list({ emailId: id });
  t.is(list.error, null, JSON.stringify(list.error));
  const [item] = list.data!.data;
  t.like(item, { filename: 'a.txt', content_type: 'text/plain', size: 9 });
  const one = await resend.emails.attachments.get({ emailId: id, id: item.id });
  t.is(one.error, null, JSON.stringify(one.error));
  t.like(one.data, { object: 'attachment', id: item.id });
  const file = await p.request(
    'GET',
    new URL(one.data!.download_url).pathname + new URL(one.data!.download_url).search,
  );
  t.is(file.text, 'sdk bytes');
  for (const options of [undefined, { expiresIn: '10m' }]) {
    const shared = await resend.emails.share(id, options as never);
    t.is(shared.error, null, JSON.stringify(shared.error));
    t.like(shared.data, { object: 'email', id });
    t.is((await p.request('GET', local(shared.data!.url))).body.id, id);
  }
});
