// What a send body must carry (resend-api.md §2): from and subject unless a template is given; a body (html,
// or a text that is not empty) unless a template is given; header fields that fold into lines of 998 octets.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { mailDomain, sendingTeam, type SendingTeam } from './helpers/sending.ts';
import { composeMessage } from '../mta/delivery/compose.ts';

let p: Platform;
let dns: DnsServer;
test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address });
  mailDomain(dns, 'inbox-one.test');
});
test.after.always(async () => {
  await p?.close();
  await dns?.close();
});

// Tests of a file run at once: each has a team of its own, so the counts of stored emails are its own.
async function world() {
  const team: SendingTeam = await sendingTeam(p, dns);
  const post = (body: unknown, path = '/emails', headers: Record<string, string> = {}) =>
    p.request('POST', path, { key: team.key, body, headers });
  const count = async () => Number((await p.db('emails').where({ team_id: team.id }).count({ n: '*' }))[0].n);
  return { team, post, count };
}

test('a template send needs no from or subject: the template is looked up, an unknown one is 422 naming template.id', async (t) => {
  const { team, post, count } = await world();
  const before = await count();
  for (const body of [
    { to: 'ann@inbox-one.test', template: { id: 'tmpl_welcome' } },
    { to: 'ann@inbox-one.test', template: { id: 'tmpl_welcome', variables: { name: 'Ann' } }, subject: 'Hi' },
    { from: `a@${team.domain}`, to: 'ann@inbox-one.test', template: { id: 'tmpl_welcome' } },
  ]) {
    const res = await post(body);
    t.is(res.status, 422, res.text);
    t.is(res.body.name, 'validation_error');
    t.is(res.body.errors[0].path, 'template.id');
    t.regex(res.body.message, /template `tmpl_welcome` not found/);
  }
  // In a batch too, item by item.
  const batch = await post(
    [
      { to: 'ann@inbox-one.test', template: { id: 'tmpl_welcome' } },
      { from: `a@${team.domain}`, to: 'ann@inbox-one.test', subject: 'x', text: 'x' },
    ],
    '/emails/batch',
    { 'x-batch-validation': 'permissive' },
  );
  t.is(batch.status, 200, batch.text);
  t.is(batch.body.data.length, 1);
  t.deepEqual(batch.body.errors, [{ index: 0, message: 'Invalid `template.id`: template `tmpl_welcome` not found.' }]);
  t.is(await count(), before + 1);
});

test('without a template, from and subject are still required: 422 missing_required_field', async (t) => {
  const { team, post, count } = await world();
  const before = await count();
  const noFrom = await post({ to: 'ann@inbox-one.test', subject: 'x', text: 'x' });
  t.is(noFrom.status, 422, noFrom.text);
  t.is(noFrom.body.name, 'missing_required_field');
  t.is(noFrom.body.message, 'Missing `from` field.');
  t.deepEqual(
    noFrom.body.errors.map((e: { path: string }) => e.path),
    ['from'],
  );

  const noSubject = await post({ from: `a@${team.domain}`, to: 'ann@inbox-one.test', text: 'x', template: null });
  t.is(noSubject.status, 422, noSubject.text);
  t.is(noSubject.body.name, 'missing_required_field');
  t.is(noSubject.body.message, 'Missing `subject` field.');

  // Every missing field is named at once.
  const neither = await post({ to: 'ann@inbox-one.test', text: 'x' });
  t.is(neither.body.name, 'missing_required_field');
  t.deepEqual(neither.body.errors.map((e: { path: string }) => e.path).sort(), ['from', 'subject']);
  const empty = await post({});
  t.is(empty.status, 422);
  t.is(empty.body.name, 'missing_required_field');
  t.deepEqual(empty.body.errors.map((e: { path: string }) => e.path).sort(), ['from', 'subject', 'to']);

  // A from of the wrong type is invalid, not missing.
  const wrong = await post({ from: 42, to: 'ann@inbox-one.test', subject: 'x', text: 'x' });
  t.is(wrong.status, 422);
  t.is(wrong.body.name, 'validation_error');
  t.is(wrong.body.errors[0].path, 'from');

  const strict = await post([{ to: 'ann@inbox-one.test', subject: 'x', text: 'x' }], '/emails/batch');
  t.is(strict.status, 422);
  t.is(strict.body.name, 'missing_required_field');
  t.regex(strict.body.message, /^Email 0: Missing `from` field\.$/);
  t.is(await count(), before);
});

test('an email with no body is refused: text "" and no html, or an empty html alone', async (t) => {
  const { team, post, count } = await world();
  const before = await count();
  const base = { from: `a@${team.domain}`, to: 'ann@inbox-one.test', subject: 'x' };
  const cases: [Record<string, unknown>, string][] = [
    [{ ...base, text: '' }, 'text'],
    [{ ...base, text: '', html: null }, 'text'],
    [{ ...base, text: '', html: '' }, 'text'],
    [{ ...base, html: '' }, 'html'],
  ];
  for (const [body, path] of cases) {
    const res = await post(body);
    t.is(res.status, 422, JSON.stringify(body));
    t.is(res.body.name, 'validation_error', JSON.stringify(body));
    t.is(res.body.errors?.[0]?.path, path, JSON.stringify(body));
    t.regex(res.body.message, /no body.*`html`.*`text`/, JSON.stringify(body));
  }
  // Neither field at all: missing, as before.
  const none = await post(base);
  t.is(none.status, 422);
  t.is(none.body.name, 'missing_required_field');
  t.is(none.body.message, 'Missing `html` or `text` field.');

  const batch = await post(
    [
      { ...base, text: 'fine' },
      { ...base, text: '' },
    ],
    '/emails/batch',
    { 'x-batch-validation': 'permissive' },
  );
  t.is(batch.status, 200, batch.text);
  t.is(batch.body.data.length, 1);
  t.is(batch.body.errors[0].index, 1);
  t.regex(batch.body.errors[0].message, /no body/);
  t.is(await count(), before + 1);
});

test('html with text "" is accepted and stores no text; html alone gets a generated text; text alone is kept', async (t) => {
  const { team, post } = await world();
  const base = { from: `a@${team.domain}`, to: 'ann@inbox-one.test', subject: 'x' };
  const optedOut = await post({ ...base, html: '<p>Hello <b>Ann</b></p>', text: '' });
  t.is(optedOut.status, 200, optedOut.text);
  t.like(await p.db('emails').where({ id: optedOut.body.id }).first(), { html: '<p>Hello <b>Ann</b></p>', text: null });

  const generated = await post({ ...base, html: '<p>Hello <b>Ann</b></p>' });
  t.is(generated.status, 200, generated.text);
  const row = await p.db('emails').where({ id: generated.body.id }).first();
  t.is(row.html, '<p>Hello <b>Ann</b></p>');
  t.regex(row.text, /Hello Ann/i);

  const textOnly = await post({ ...base, text: 'Plain', html: null });
  t.is(textOnly.status, 200, textOnly.text);
  t.like(await p.db('emails').where({ id: textOnly.body.id }).first(), { html: null, text: 'Plain' });
});

/** The longest line (in octets, without its CRLF) of the message the mta composes for a stored email. */
async function longestComposedLine(id: string): Promise<number> {
  const email = await p.db('emails').where({ id }).first();
  const raw = await composeMessage(p.deps, p.db, email);
  return Math.max(
    ...raw
      .toString('latin1')
      .split('\r\n')
      .map((l) => l.length),
  );
}

test('RFC 5322 §2.1.1: a subject or header value with a run too long to fold into a 998-octet line is refused; nothing stored', async (t) => {
  const { team, post, count } = await world();
  const before = await count();
  const base = { from: `a@${team.domain}`, to: 'ann@inbox-one.test', subject: 'x', text: 'x' };
  const cases: [Record<string, unknown>, string, string, RegExp][] = [
    // 2000 characters without a space: nodemailer folds only at whitespace, so this would be a 2008-octet line.
    [
      { ...base, headers: { 'X-Long': 'a'.repeat(2000) } },
      'validation_error',
      'headers.X-Long',
      /`X-Long` header value has 2000 characters with no space .* at most 990 here/,
    ],
    // Within the 2000-character limit, words before it: the run alone is too long.
    [
      { ...base, headers: { 'X-Long': `${'word '.repeat(100)}${'b'.repeat(991)}` } },
      'validation_error',
      'headers.X-Long',
      /has 992 characters/,
    ],
    // Whitespace before a long word goes onto its continuation line with it.
    [
      { ...base, headers: { 'X-Long': `a${' '.repeat(100)}${'b'.repeat(980)}` } },
      'validation_error',
      'headers.X-Long',
      /has 1080 characters/,
    ],
    // Not encoded by nodemailer whatever it holds (a msg-id), so octets count, and the angle brackets it adds.
    [
      { ...base, headers: { 'In-Reply-To': `<${'é'.repeat(600)}@x.test>` } },
      'validation_error',
      'headers.In-Reply-To',
      /has 1209 characters .* at most 983 here/,
    ],
    // "Subject: " and 998 characters: a 1007-octet line.
    [
      { ...base, subject: 's'.repeat(998) },
      'validation_error',
      'subject',
      /^The subject has 998 characters with no space .* at most 989 here\.$/,
    ],
    [{ ...base, subject: `Hello ${'s'.repeat(990)}` }, 'validation_error', 'subject', /has 991 characters/],
    // A media type names at most 127 characters a side (RFC 6838 §4.2); it is a header line too.
    [
      {
        ...base,
        attachments: [{ filename: 'a.bin', content: 'eA==', content_type: `application/${'x'.repeat(2000)}` }],
      },
      'invalid_attachment',
      'attachments.0.content_type',
      /at most 127/,
    ],
  ];
  for (const [body, name, path, message] of cases) {
    const label = JSON.stringify(body).slice(0, 100);
    const res = await post(body);
    t.is(res.status, 422, label);
    t.is(res.body.name, name, label);
    t.is(res.body.errors?.[0]?.path, path, label);
    t.regex(res.body.errors?.[0]?.message ?? '', message, label);
    t.is(
      res.body.message,
      path === 'subject' ? `Invalid \`subject\`: ${res.body.errors[0].message}` : res.body.errors[0].message,
      label,
    );
  }
  // In a batch, item by item, as every refusal of the accept path.
  const batch = await post([base, cases[0][0]], '/emails/batch', { 'x-batch-validation': 'permissive' });
  t.is(batch.status, 200, batch.text);
  t.deepEqual(
    batch.body.errors.map((e: { index: number }) => e.index),
    [1],
  );
  t.is(await count(), before + 1);
});

test('long values that fold (words, non-ASCII, the longest run allowed) are accepted; the composed message has no line over 998 octets', async (t) => {
  const { team, post } = await world();
  const base = { from: `a@${team.domain}`, to: 'ann@inbox-one.test', subject: 'x', text: 'x' };
  const words = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
  const accepted: Record<string, unknown>[] = [
    { ...base, headers: { 'X-Long': words.slice(0, 1500) } },
    { ...base, subject: words.slice(0, 998) },
    // Encoded-words (RFC 2047), which nodemailer splits.
    { ...base, headers: { 'X-Intl': 'ü'.repeat(2000) }, subject: 'é'.repeat(998) },
    // The longest runs allowed: 998 - ("Subject: " or "X-Long: ").
    { ...base, headers: { 'X-Long': 'a'.repeat(990) }, subject: 's'.repeat(989) },
    {
      ...base,
      headers: { 'List-Unsubscribe': `<https://shop.test/leave?u=${'1'.repeat(900)}>, <mailto:leave@shop.test>` },
    },
    // Fields whose limits already keep them short: a 256-character display name, a 255-character filename, a long
    // address.
    {
      ...base,
      from: `${'N'.repeat(256)} <${'l'.repeat(64)}@${team.domain}>`,
      reply_to: `"${'\\"'.repeat(127)}" <r@inbox-one.test>`,
      attachments: [
        { filename: `${'f'.repeat(251)}.txt`, content: 'eA==' },
        { filename: `${'ß'.repeat(251)}.txt`, content: 'eA==', content_type: `${'t'.repeat(127)}/${'s'.repeat(127)}` },
      ],
    },
  ];
  for (const body of accepted) {
    const label = JSON.stringify(body).slice(0, 100);
    const res = await post(body);
    t.is(res.status, 200, `${label}: ${res.text}`);
    if (res.status !== 200) continue;
    t.true((await longestComposedLine(res.body.id)) <= 998, label);
  }
});
