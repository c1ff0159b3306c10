// Tracking off changes nothing: the same sends through the real delivery stages to a loopback MX give exactly the
// bytes they gave before open and click tracking existed. The fixtures in test/fixtures/tracking-off/ were written by
// this file (UPDATE_TRACKING_FIXTURES=1) on the code before tracking (commit "Golden bytes of sends with tracking
// off"), and are never rewritten since. What varies from run to run (the email id, and the MIME boundary, Message-ID
// and Date derived from it and its time; the DKIM signature, whose key is new in every run) is replaced by names
// before comparing; the signature is verified instead.
import test from 'ava';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { apiSender, startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { root } from '../shared/layout.ts';

const FIXTURES = path.join(root, 'test', 'fixtures', 'tracking-off');
const UPDATE = process.env.UPDATE_TRACKING_FIXTURES === '1';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

const HTML =
  '<html><body><p>Hello <a href="https://shop.example.test/a?x=1&amp;y=2">our shop</a> and ' +
  '<a href=\'http://news.example.test/\'>news</a>, <a href="mailto:help@example.test">help</a>.</p>' +
  '<p><a href="https://shop.example.test/unsubscribe">Unsubscribe</a></p><img src="https://cdn.example.test/x.png" alt=""></body></html>';

/** The message as received, with what differs between runs named instead. */
function normalised(raw: Buffer, emailId: string, created: Date): string {
  const boundary = createHash('sha256').update(`boundary:${emailId}`).digest('hex').slice(0, 16);
  const text = raw.toString('latin1');
  const head = text.slice(0, text.indexOf('\r\n\r\n'));
  const fields = head.split(/\r\n(?![ \t])/);
  const kept = fields.filter((f) => !/^dkim-signature:/i.test(f)).join('\r\n');
  const date = created.toUTCString().replace('GMT', '+0000');
  return (kept + text.slice(head.length))
    .split(emailId)
    .join('<EMAIL-ID>')
    .split(boundary)
    .join('<BOUNDARY>')
    .split(date)
    .join('<DATE>');
}

async function compare(t: import('ava').ExecutionContext, name: string, actual: string): Promise<void> {
  const file = path.join(FIXTURES, `${name}.eml`);
  if (UPDATE || !existsSync(file)) {
    if (!UPDATE) return void t.fail(`missing fixture ${file} (UPDATE_TRACKING_FIXTURES=1 writes it)`);
    await mkdir(FIXTURES, { recursive: true });
    await writeFile(file, actual, 'latin1');
  }
  t.is(actual, await readFile(file, 'latin1'), name);
}

const SENDS: [string, Record<string, unknown>][] = [
  ['html-and-text', { to: 'ann@golden-inbox.test', subject: 'Links', html: HTML }],
  [
    'two-recipients-cc',
    { to: ['ann@golden-inbox.test', 'bob@golden-inbox.test'], cc: 'cy@golden-inbox.test', subject: 'Two', html: HTML },
  ],
  [
    'attachment',
    {
      to: 'ann@golden-inbox.test',
      subject: 'File',
      html: HTML,
      text: 'See the file: https://shop.example.test/a',
      attachments: [{ filename: 'a.txt', content: Buffer.from('attached bytes').toString('base64') }],
    },
  ],
  ['text-only', { to: 'ann@golden-inbox.test', subject: 'Plain', text: 'Visit https://shop.example.test/a now.' }],
];

test('with tracking off, every send leaves with the bytes it had before tracking existed', async (t) => {
  w.mx('golden-inbox.test');
  const sender = await apiSender(w, 'golden-sender.test');
  // One domain that never had tracking, one that had it and turned it off again.
  const toggled = await apiSender(w, 'golden-toggled.test');
  const on = await w.p.request('PATCH', `/domains/${toggled.domain.id}`, {
    key: toggled.team.key,
    body: { open_tracking: true, click_tracking: true },
  });
  t.is(on.status, 200, on.text);
  const off = await w.p.request('PATCH', `/domains/${toggled.domain.id}`, {
    key: toggled.team.key,
    body: { open_tracking: false, click_tracking: false },
  });
  t.is(off.status, 200, off.text);
  // The records changed twice: verified again as the world's sending domains are (w.sendingDomain).
  await w.p.db('domains').where({ id: toggled.domain.id }).update({ status: 'verified', verified_at: new Date() });

  for (const [who, s] of [
    ['never', sender],
    ['toggled', toggled],
  ] as const) {
    for (const [name, body] of SENDS) {
      const id = await s.send({ ...body, from: `Shop <shop@${s.domain.name}>` });
      const before = w.sink.messages.length;
      await processDelivery(w.deps, id);
      const mine = w.sink.messages.slice(before);
      const email = await w.p.db('emails').where({ id }).first();
      t.true(mine.length >= 1, name);
      for (const [i, m] of mine.entries()) {
        t.deepEqual(
          (await w.verifyDkim(m.raw)).map((v) => v.status),
          ['pass'],
          `${who} ${name}`,
        );
        const actual = normalised(m.raw, id, email.created_at).split(s.domain.name).join('<DOMAIN>');
        await compare(t, `${name}-${i}`, actual);
      }
    }
  }
});
