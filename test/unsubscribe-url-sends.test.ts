// `{{{RESEND_UNSUBSCRIBE_URL}}}` in a plain send (not a broadcast) with several recipients: each recipient's copy
// carries its own signed link to the preference page, in the html and the text, whatever the part's encoding and
// with click tracking on; a send without the placeholder still leaves as one message for a domain. The copies are
// delivered through the mta's deliver job to a loopback MX, parsed, and one link is followed: it unsubscribes that
// recipient's contact only.
import test from 'ava';
import { simpleParser } from 'mailparser';
import { apiSender, startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { readUnsubscribeToken } from '../shared/emails/mail-tokens.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
  w.mx('unsub-url-inbox.test');
});
test.after.always(async () => {
  await w?.close();
});

const TAG = '{{{RESEND_UNSUBSCRIBE_URL}}}';
const LINK = /https?:\/\/[^\s"<>]+\/unsubscribe\/([A-Za-z0-9_-]+)/g;

/** The unsubscribe tokens a text holds, in order. */
const tokensIn = (text: string) => [...text.matchAll(LINK)].map((m) => m[1]);

async function deliveredCopies(id: string) {
  await processDelivery(w.deps, id);
  // The Message-ID names the email (<id@domain>): the tests of this file run at once.
  const mine = w.sink.messages.filter((m) => m.raw.toString('latin1').includes(`<${id}@`));
  return Promise.all(mine.map(async (m) => ({ to: m.to, raw: m.raw, mail: await simpleParser(m.raw) })));
}

test('each recipient of a plain send gets its own unsubscribe link, in html and text, base64 or quoted-printable', async (t) => {
  const s = await apiSender(w, 'unsub-url-shop.test');
  const to = ['ann@unsub-url-inbox.test', 'bob@unsub-url-inbox.test'];
  const cc = 'cy@unsub-url-inbox.test';
  for (const [name, body] of [
    ['ascii', { html: `<p>News</p><p><a href="${TAG}">Unsubscribe</a></p>`, text: `News\nUnsubscribe: ${TAG}` }],
    // Mostly non-ASCII: the composer picks base64 for the parts.
    [
      'base64',
      { html: `<p>${'Grüße, 東京 '.repeat(40)}</p><a href="${TAG}">Abmelden</a>`, text: `${'東京'.repeat(80)} ${TAG}` },
    ],
  ] as const) {
    const id = await s.send({ to, cc, subject: name, ...body });
    const copies = await deliveredCopies(id);
    t.is(copies.length, 3, `${name}: a copy per recipient`);
    const recipients = await w.p.db('email_recipients').where({ email_id: id });
    const seen = new Set<string>();
    for (const copy of copies) {
      t.is(copy.to.length, 1, name);
      if (name === 'base64') t.regex(copy.raw.toString('latin1'), /Content-Transfer-Encoding: base64/i);
      const html = String(copy.mail.html);
      const text = String(copy.mail.text);
      t.false(html.includes(TAG) || text.includes(TAG), `${name}: the placeholder is filled`);
      const [fromHtml] = tokensIn(html);
      t.deepEqual(tokensIn(text), [fromHtml], `${name}: the text links the same URL as the html`);
      // The token names this copy's own recipient.
      const recipient = recipients.find((r) => r.id === readUnsubscribeToken(w.deps.secrets, fromHtml));
      t.is(recipient?.address, copy.to[0], name);
      seen.add(fromHtml);
      t.is(copy.mail.headers.get('list-unsubscribe'), undefined, 'a plain send gets no List-Unsubscribe');
      t.deepEqual(
        (await w.verifyDkim(copy.raw)).map((v) => v.status),
        ['pass'],
      );
    }
    t.is(seen.size, 3, `${name}: three different links`);
    // What GET /emails/{id} shows is what was sent: the placeholder.
    const stored = await w.p.request('GET', `/emails/${id}`, { key: s.team.key });
    t.true(stored.body.html.includes(TAG));
  }

  // Following Bob's link unsubscribes Bob, no one else.
  const id = await s.send({ to, subject: 'Follow', html: `<a href="${TAG}">Unsubscribe</a>` });
  const copies = await deliveredCopies(id);
  const bob = copies.find((c) => c.to[0] === 'bob@unsub-url-inbox.test')!;
  const [token] = tokensIn(String(bob.mail.html));
  const click = await fetch(`${w.p.url}/unsubscribe/${token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });
  t.is(click.status, 200);
  const contacts = await w.p.db('contacts').where({ team_id: s.team.id }).select('email', 'unsubscribed');
  t.deepEqual(contacts, [{ email: 'bob@unsub-url-inbox.test', unsubscribed: true }]);
});

test('with click tracking on, the unsubscribe link is filled, not tracked; other links are tracked', async (t) => {
  const s = await apiSender(w, 'unsub-url-tracked.test');
  const on = await w.p.request('PATCH', `/domains/${s.domain.id}`, {
    key: s.team.key,
    body: { click_tracking: true },
  });
  t.is(on.status, 200, on.text);
  await w.p.db('domains').where({ id: s.domain.id }).update({ status: 'verified', verified_at: new Date() });
  const to = ['dee@unsub-url-inbox.test', 'eve@unsub-url-inbox.test'];
  const id = await s.send({
    to,
    subject: 'Tracked',
    html: `<a href="https://unsub-url-tracked.test/shop">Shop</a> <a href="${TAG}">Unsubscribe</a>`,
  });
  const copies = await deliveredCopies(id);
  t.is(copies.length, 2);
  const tokens = copies.map((c) => tokensIn(String(c.mail.html)));
  for (const [i, c] of copies.entries()) {
    t.is(tokens[i].length, 1, 'one unsubscribe link');
    t.false(String(c.mail.html).includes('https://unsub-url-tracked.test/shop'), 'the shop link is tracked');
  }
  t.not(tokens[0][0], tokens[1][0]);
});

test('a send without the placeholder to two recipients of one domain is still one message', async (t) => {
  const s = await apiSender(w, 'unsub-url-plain.test');
  const id = await s.send({
    to: ['fay@unsub-url-inbox.test', 'gus@unsub-url-inbox.test'],
    html: '<a href="https://unsub-url-plain.test/unsubscribe">Unsubscribe</a>',
  });
  const copies = await deliveredCopies(id);
  t.is(copies.length, 1);
  t.deepEqual(copies[0].to.sort(), ['fay@unsub-url-inbox.test', 'gus@unsub-url-inbox.test']);
});
