// Received mail as the official SDK (resend 6.38) reads and forwards it: `receiving.get` with `html_format`, and
// `receiving.forward`, which downloads the raw message through its signed link (so the platform's PUBLIC_BASE_URL
// here is where it listens), then sends it again through POST /emails, as it was (passthrough) or wrapped as a
// message/rfc822 attachment. Mail through the real MX and receive job; the sends as the api accepts them.
import test from 'ava';
import { Resend } from 'resend';
import { freePort } from './helpers/ports.ts';
import { managedDomain } from './helpers/platform.ts';
import { PDF, startReceivingWorld, type ReceivingWorld } from './helpers/receiving-world.ts';

let w: ReceivingWorld;
test.before(async () => {
  const port = await freePort();
  w = await startReceivingWorld({ PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
});
test.after.always(() => w?.close());

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

async function received() {
  const { team, domain } = await w.receivingTeam();
  const id = await w.deliverOne(`orders@${domain}`, {
    from: 'Alice <alice@sender.test>',
    to: `orders@${domain}`,
    subject: 'Order 42',
    text: 'Plain words',
    html: '<p>Hello <img src="cid:logo@rx" alt="logo"> <img src="cid:absent@rx"></p>',
    attachments: [
      { filename: 'logo.png', content: PNG, contentType: 'image/png', cid: 'logo@rx' },
      { filename: 'invoice.pdf', content: PDF, contentType: 'application/pdf' },
    ],
  });
  const resend = new Resend(team.key, { baseUrl: w.p.url } as never);
  const from = `forwarder@${(await managedDomain(w.p, team)).name}`;
  return { team, id, resend, from, to: `delivered@${w.p.config.SIMULATOR_DOMAIN}` };
}

test('html_format: cid by default (the HTML as received), data_uri inlines the image parts; another value is 422', async (t) => {
  const { team, id, resend } = await received();
  const plain = await resend.emails.receiving.get(id);
  t.is(plain.error, null, JSON.stringify(plain.error));
  t.regex(plain.data!.html!, /src="cid:logo@rx"/);
  t.deepEqual((await resend.emails.receiving.get(id, { html_format: 'cid' })).data?.html, plain.data?.html);

  const inlined = await resend.emails.receiving.get(id, { html_format: 'data_uri' });
  t.is(inlined.error, null, JSON.stringify(inlined.error));
  t.true(inlined.data!.html!.includes(`src="data:image/png;base64,${PNG.toString('base64')}"`), inlined.data!.html!);
  t.regex(inlined.data!.html!, /src="cid:absent@rx"/, 'a reference to no part stays as it was');
  t.deepEqual(
    { ...inlined.data, html: null },
    { ...plain.data, html: null, raw: inlined.data!.raw },
    'only the html differs (the raw link is fresh each time)',
  );

  const bad = await w.p.request('GET', `/emails/receiving/${id}?html_format=inline`, { key: team.key });
  t.is(bad.status, 422);
  t.is(bad.body.name, 'validation_error');
  t.regex(bad.body.message, /html_format/);
});

test('receiving.forward, passthrough: the message sent again as it was, its text, html and both parts', async (t) => {
  const { team, id, resend, from, to } = await received();
  const forwarded = await resend.emails.receiving.forward({ emailId: id, from, to });
  t.is(forwarded.error, null, JSON.stringify(forwarded.error));
  const sent = await resend.emails.get(forwarded.data!.id);
  t.is(sent.error, null, JSON.stringify(sent.error));
  t.like(sent.data, { from, to: [to], subject: 'Order 42' });
  t.is(sent.data?.text?.trim(), 'Plain words');
  t.regex(sent.data?.html ?? '', /src="cid:logo@rx"/);
  const parts = await w.p.request('GET', `/emails/${forwarded.data!.id}/attachments`, { key: team.key });
  t.is(parts.status, 200, parts.text);
  t.deepEqual(
    parts.body.data.map((a: { filename: string; content_type: string; size: number }) => [
      a.filename,
      a.content_type,
      a.size,
    ]),
    [
      ['logo.png', 'image/png', PNG.length],
      ['invoice.pdf', 'application/pdf', PDF.length],
    ],
  );
  t.is(
    parts.body.data.find((a: { filename: string }) => a.filename === 'logo.png').content_id,
    'logo@rx',
    'the inline image keeps its Content-ID, so the html still finds it',
  );
});

test('receiving.forward, wrapped: "Fwd:", a note of its own, the original as forwarded_message.eml byte for byte', async (t) => {
  const { team, id, resend, from, to } = await received();
  const forwarded = await resend.emails.receiving.forward({
    emailId: id,
    from,
    to,
    passthrough: false,
    text: 'See below.',
  });
  t.is(forwarded.error, null, JSON.stringify(forwarded.error));
  const sent = await resend.emails.get(forwarded.data!.id);
  t.like(sent.data, { subject: 'Fwd: Order 42', text: 'See below.' });
  const parts = await w.p.request('GET', `/emails/${forwarded.data!.id}/attachments`, { key: team.key });
  t.is(parts.body.data.length, 1);
  const [part] = parts.body.data;
  t.like(part, { filename: 'forwarded_message.eml', content_type: 'message/rfc822' });
  const raw = await (await w.download((await resend.emails.receiving.get(id)).data!.raw!.download_url)).arrayBuffer();
  const attached = await (await fetch(part.download_url)).arrayBuffer();
  t.deepEqual(Buffer.from(attached), Buffer.from(raw), 'the received message, unchanged');
});
