// What tracking changes in a message, without the network: the HTML plan (which links are rewritten, where the pixel
// goes), the tokens (signed per domain, recipient and link), and the MIME copies (every byte outside the HTML parts
// kept; an HTML part decoded, rewritten, encoded again), checked by parsing the copies with mailparser.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import { simpleParser } from 'mailparser';
import { linkUrl, planHtml, renderHtml, type PlanOptions } from '../shared/tracking/links.ts';
import { clickToken, domainKey, openToken, readToken, trackableUrl } from '../shared/tracking/tokens.ts';
import { personalize, planMessage } from '../shared/tracking/mime.ts';
import { keptIp } from '../shared/tracking/ip.ts';
import { newId } from '../shared/ids.ts';

const options: PlanOptions = {
  open: true,
  click: true,
  keep: (url) => url.startsWith('https://api.platform.test/unsubscribe/'),
  charset: 'utf8',
};
const urls = {
  click: (i: number, url: string) => `https://t.test/c/${i}/${encodeURIComponent(url)}`,
  open: () => 'https://t.test/o/pixel',
};

test('only absolute http(s) links are rewritten; unsubscribe, preference and every other scheme stay as they are', (t) => {
  const kept = [
    '<a href="javascript:alert(1)">x</a>',
    '<a href=" JavaScript:alert(1)">x</a>',
    '<a href="java&#x09;script:alert(1)">x</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
    '<a href="vbscript:msgbox">x</a>',
    '<a href="mailto:help@example.test">mail us</a>',
    '<a href="tel:+15550100">call</a>',
    '<a href="/relative">rel</a>',
    '<a href="#top">top</a>',
    '<a href="//cdn.example.test/x">scheme-relative</a>',
    '<a href="https://example.test/u?id=1">Unsubscribe</a>',
    '<a href="https://example.test/unsubscribe?id=1">here</a>',
    '<a href="https://example.test/prefs">Manage your preferences</a>',
    '<a href="https://example.test/x">Opt out</a>',
    '<a href="https://example.test/x">Abmelden</a>',
    '<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">leave</a>',
    '<a href="https://api.platform.test/unsubscribe/abc">stop</a>',
    `<a href="https://example.test/${'x'.repeat(2100)}">long</a>`,
    '<a name="anchor">no href</a>',
  ];
  const html = `<html><body>${kept.join('\n')}</body></html>`;
  const plan = planHtml(html, options)!;
  t.deepEqual(plan.links, []);
  const out = renderHtml(plan, urls);
  t.is(out.replace(/<img src="https:\/\/t\.test\/o\/pixel"[^>]*>/, ''), html, 'only the pixel was added');
  t.is(planHtml(html, { ...options, open: false }), null, 'nothing to do without the pixel');
});

test('a tracked link keeps everything around its href; entities and odd spacing are read as a browser reads them', (t) => {
  const html =
    '<p>A <a class="btn" href="https://shop.example.test/a?x=1&amp;y=2" target="_blank">shop</a>, ' +
    "<a href='HTTP://News.example.test/é ü'>news</a>, <a\nhref = https://plain.example.test/p>plain</a>, " +
    '<A HREF="https://upper.example.test/">upper</A></p>';
  const plan = planHtml(html, { ...options, open: false })!;
  t.deepEqual(plan.links, [
    'https://shop.example.test/a?x=1&y=2',
    'HTTP://News.example.test/%C3%A9%20%C3%BC',
    'https://plain.example.test/p',
    'https://upper.example.test/',
  ]);
  const out = renderHtml(plan, urls);
  t.true(out.startsWith('<p>A <a class="btn" href="https://t.test/c/0/'));
  t.regex(out, /target="_blank">shop<\/a>, <a href='?"https:\/\/t\.test\/c\/1\//);
  t.regex(out, /<a\nhref = "https:\/\/t\.test\/c\/2\/[^"]+">plain<\/a>/);
  t.is(linkUrl('https://x.test/a&amp;b&#x3D;c\n', 'utf8'), 'https://x.test/a&b=c');
  t.is(linkUrl('https://x.test/é', 'latin1'), 'https://x.test/%E9');
});

test('the pixel goes before the last </body>, or at the end of a fragment', (t) => {
  const full = planHtml('<html><body><p>Hi</p></BODY></html>', { ...options, click: false })!;
  t.is(renderHtml(full, urls).replace(/<img[^>]*>/, '[P]'), '<html><body><p>Hi</p>[P]</BODY></html>');
  const fragment = planHtml('<p>Hi</p>', { ...options, click: false })!;
  t.is(renderHtml(fragment, urls).replace(/<img[^>]*>/, '[P]'), '<p>Hi</p>[P]');
  t.regex(renderHtml(fragment, urls), /<img src="https:\/\/t\.test\/o\/pixel" width="1" height="1" alt=""/);
});

test('a scan of hostile HTML stays linear', (t) => {
  const hostile = '<a href="https://x.test/"'.repeat(20_000) + '<a '.repeat(50_000);
  const started = performance.now();
  const plan = planHtml(hostile, options);
  t.truthy(plan);
  t.true(performance.now() - started < 2000, `${performance.now() - started} ms`);
});

test('tokens: per domain key, per recipient and link; tampering, another domain or another kind reads as nothing', (t) => {
  const secrets = randomBytes(32);
  const domain = newId();
  const key = domainKey(secrets, domain);
  const recipient = newId();
  const url = 'https://shop.example.test/a?x=1&y=2';
  const click = clickToken(key, recipient, 3, url);
  t.deepEqual(readToken(key, 'click', click), { kind: 'click', recipientId: recipient, linkIndex: 3, url });
  const open = openToken(key, recipient);
  t.deepEqual(readToken(key, 'open', open), { kind: 'open', recipientId: recipient, linkIndex: null, url: null });
  t.regex(open, /^[A-Za-z0-9_-]{39}$/);
  t.not(openToken(key, newId()), open, 'another recipient, another token');
  t.not(clickToken(key, recipient, 4, url), click, 'another link, another token');
  t.is(readToken(key, 'open', click), null, 'a click token is no pixel');
  t.is(readToken(key, 'click', open), null);
  t.is(readToken(domainKey(secrets, newId()), 'click', click), null, "another domain's key");
  t.is(readToken(domainKey(randomBytes(32), domain), 'click', click), null, 'another SECRETS_KEY');
  for (let i = 0; i < click.length; i++) {
    const flipped = click.slice(0, i) + (click[i] === 'A' ? 'B' : 'A') + click.slice(i + 1);
    t.is(readToken(key, 'click', flipped), null, `character ${i} changed`);
  }
  t.is(readToken(key, 'click', click.slice(0, -1)), null);
  t.is(readToken(key, 'click', `${click}A`), null);
  t.is(readToken(key, 'click', ''), null);
  t.is(readToken(key, 'click', '%00'), null);
  // A URL swapped inside a token keeps its tag only if the tag were recomputed, which needs the key.
  const bytes = Buffer.from(click, 'base64url');
  const swapped = Buffer.from(bytes);
  swapped.write('https://evil.example.test/aaaaaaaa', 19, 'latin1');
  t.is(readToken(key, 'click', swapped.toString('base64url')), null);
  for (const bad of [
    'javascript:alert(1)',
    'data:text/html,x',
    'https://',
    'https://a b.test/',
    `https://x.test/${'a'.repeat(2048)}`,
  ])
    t.false(trackableUrl(bad), bad);
  t.throws(() => clickToken(key, recipient, 0, 'javascript:alert(1)'));
});

test('what is kept of an IP address', (t) => {
  t.is(keptIp('203.0.113.77', 'truncated'), '203.0.113.0');
  t.is(keptIp('::ffff:203.0.113.77', 'truncated'), '203.0.113.0');
  t.is(keptIp('2001:db8:85a3:8d3:1319:8a2e:370:7348', 'truncated'), '2001:db8:85a3::');
  t.is(keptIp('2001:db8::1', 'truncated'), '2001:db8:0::');
  t.is(keptIp('::1', 'truncated'), '0:0:0::');
  t.is(keptIp('203.0.113.77', 'full'), '203.0.113.77');
  t.is(keptIp('::ffff:203.0.113.77', 'full'), '203.0.113.77');
  t.is(keptIp('203.0.113.77', 'none'), null);
  t.is(keptIp('not an ip', 'truncated'), null);
});

const compose = (o: ConstructorParameters<typeof MailComposer>[0]) => new MailComposer(o).compile().build();

async function htmlOf(raw: Buffer): Promise<string> {
  const parsed = await simpleParser(raw);
  return parsed.html || '';
}

test('a composed message: the HTML part rewritten (quoted-printable), every other byte kept', async (t) => {
  const html = '<p>Grüße, <a href="https://shop.example.test/a?x=1&amp;y=2">shop</a></p>' + 'x'.repeat(300);
  const raw = await compose({
    from: 'a@example.test',
    to: 'b@example.test',
    subject: 'Hi',
    text: 'Plain https://shop.example.test/a',
    html,
    attachments: [{ filename: 'page.html', content: '<a href="https://inside.example.test/">attached</a>' }],
  });
  const plan = (await planMessage(raw, { open: true, click: true, keep: () => false }))!;
  t.is(plan.links, 1);
  const copy = personalize(plan, urls);
  const parsed = await simpleParser(copy);
  t.is(parsed.text?.trim(), 'Plain https://shop.example.test/a', 'the text part is untouched');
  t.is(
    parsed.html,
    `<p>Grüße, <a href="https://t.test/c/0/${encodeURIComponent('https://shop.example.test/a?x=1&y=2')}">shop</a></p>${'x'.repeat(300)}` +
      '<img src="https://t.test/o/pixel" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0">',
  );
  t.is(
    parsed.attachments[0].content.toString(),
    '<a href="https://inside.example.test/">attached</a>',
    'an attached HTML file is no body',
  );
  // Outside the HTML part, the bytes are the original's.
  const text = raw.toString('latin1');
  const start = text.indexOf('Content-Type: text/html');
  const after = text.indexOf('\r\n----', start);
  t.is(copy.toString('latin1').slice(0, start), text.slice(0, start));
  t.true(copy.toString('latin1').endsWith(text.slice(after)));
  t.true(
    copy
      .toString('latin1')
      .split('\r\n')
      .every((l) => l.length <= 78),
    'lines stay short',
  );
});

test('base64, 7bit single-part and latin1 HTML are rewritten in their own way; UTF-16 and non-HTML are left alone', async (t) => {
  const base64 = Buffer.from(
    'From: a@x.test\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=XX\r\n\r\n--XX\r\n' +
      'Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n' +
      Buffer.from('<a href="https://b.test/">b</a>').toString('base64') +
      '\r\n--XX--\r\n',
  );
  const b = personalize((await planMessage(base64, { open: false, click: true, keep: () => false }))!, urls);
  t.regex(b.toString(), /Content-Transfer-Encoding: base64/);
  t.is(await htmlOf(b), `<a href="https://t.test/c/0/${encodeURIComponent('https://b.test/')}">b</a>`);

  const single = Buffer.from(
    'From: a@x.test\r\nTo: b@x.test\r\nSubject: s\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=iso-8859-1\r\n' +
      'Content-Transfer-Encoding: 8bit\r\n\r\n<p>Caf\xe9 <a href="https://c.test/\xe9">c</a></p>\r\n',
    'latin1',
  );
  const s = personalize((await planMessage(single, { open: false, click: true, keep: () => false }))!, urls);
  t.regex(s.toString('latin1'), /Content-Transfer-Encoding: quoted-printable\r\n/);
  t.regex(s.toString('latin1'), /^From: a@x\.test\r\nTo: b@x\.test\r\nSubject: s\r\n/);
  t.is(await htmlOf(s), `<p>Café <a href="https://t.test/c/0/${encodeURIComponent('https://c.test/%E9')}">c</a></p>\n`);
  t.true(s.toString('latin1').endsWith('</p>\r\n'), 'the message ends as it did');

  const utf16 = Buffer.concat([
    Buffer.from('Content-Type: text/html; charset=utf-16le\r\nContent-Transfer-Encoding: base64\r\n\r\n'),
    Buffer.from(Buffer.from('<a href="https://d.test/">d</a>', 'utf16le').toString('base64')),
  ]);
  t.is(await planMessage(utf16, { open: true, click: true, keep: () => false }), null);
  const textOnly = await compose({ from: 'a@x.test', to: 'b@x.test', text: 'https://e.test/' });
  t.is(await planMessage(textOnly, { open: true, click: true, keep: () => false }), null);
});
