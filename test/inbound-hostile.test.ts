// The rest of the hostile corpus, through the real MX and the receive job: SMTP smuggling sequences
// (each a single message, never a second one smuggled in), bad transfer encodings and charsets, a zip-bomb-like
// attachment (stored as the bytes received, never expanded) and HTML with scripts (kept as data, and an HTML
// attachment is never served as HTML).
import test from 'ava';
import net from 'node:net';
import { deflateRawSync } from 'node:zlib';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startTestMx, storedBytes, type TestMx } from './helpers/receive-job.ts';
import { processReceived } from '../inbound/receive/job.ts';

let p: Platform;
let mx: TestMx;

test.before(async () => {
  p = await startPlatform();
  mx = await startTestMx(p);
});
test.after.always(async () => {
  await mx?.close();
  await p?.close();
});

/** One SMTP session over a raw socket: `script` is written as given after EHLO; answers the whole transcript. */
async function rawSession(port: number, script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let sent = false;
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      text += d;
      if (!sent && /^220 /m.test(text)) {
        sent = true;
        socket.write('EHLO smuggler.test\r\n');
        // The rest once EHLO is answered (PIPELINING lets the client send it all at once).
        const wait = setInterval(() => {
          if (/^250 /m.test(text.split('\r\n').slice(1).join('\r\n'))) {
            clearInterval(wait);
            socket.write(script, 'latin1');
          }
        }, 5);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    setTimeout(() => socket.end(), 3000);
  });
}

test.serial(
  'SMTP smuggling: \\n.\\n, \\n.\\r\\n, \\r.\\r\\n and \\r\\n.\\r inside DATA never end the message; no second message appears',
  async (t) => {
    const { team } = await mx.receivingTeam('smuggle.test');
    const port = mx.port;
    for (const [name, seq] of Object.entries({
      lf: '\n.\n',
      lfCrlf: '\n.\r\n',
      crDotCrlf: '\r.\r\n',
      crlfDotCr: '\r\n.\r',
    })) {
      const before = await p
        .db('received_messages')
        .where({ team_id: team.id })
        .count<{ count: string }[]>('* as count');
      const smuggled = `MAIL FROM:<evil@smuggler.test>\r\nRCPT TO:<victim-${name}@smuggle.test>\r\nDATA\r\nSubject: smuggled\r\n\r\nx\r\n`;
      const script =
        `MAIL FROM:<a@sender.test>\r\nRCPT TO:<first-${name}@smuggle.test>\r\nDATA\r\n` +
        `Subject: first\r\n\r\nhello${seq}${smuggled}.\r\nQUIT\r\n`;
      const transcript = await rawSession(port, script);
      const stored = await p.db('received_messages').where({ team_id: team.id });
      const after = Number(
        (await p.db('received_messages').where({ team_id: team.id }).count<{ count: string }[]>('* as count'))[0].count,
      );
      const added = after - Number(before[0].count);
      // Either the whole DATA is refused, or it is one message; never a message for the smuggled recipient.
      t.true(added <= 1, `${name}: at most one message (${added})`);
      t.false(
        stored.some((r: { rcpt_to: string[] }) => r.rcpt_to.some((a) => a.startsWith('victim-'))),
        `${name}: nothing for the smuggled RCPT`,
      );
      if (added === 1) {
        const id = /^250 .*stored as (\S+)/m.exec(transcript)?.[1];
        t.truthy(id, `${name}: accepted as one message`);
        const row = stored.find((r: { id: string }) => r.id === id);
        const raw = (await storedBytes(p, row.id))!.toString('latin1');
        t.true(
          raw.includes('MAIL FROM:<evil@smuggler.test>'),
          `${name}: the smuggled commands stayed data inside the one message`,
        );
      } else t.regex(transcript, /^5\d\d /m, `${name}: refused with a clear reply`);
    }
  },
);

test.serial(
  'bad encodings and charsets: stored and processed, the text as readable as it gets, nothing thrown',
  async (t) => {
    const { team } = await mx.receivingTeam('encodings.test');
    const raw = [
      'From: Bad <bad@sender.test>',
      'To: x@encodings.test',
      'Subject: =?x-unknown-charset?B?////?= =?utf-8?Q?broken=ZZ?=',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: base64',
      '',
      '!!!not base64 at all@@@',
      '--b',
      'Content-Type: text/html; charset=no-such-charset',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '<p>=ZZ=4 broken qp=',
      '--b',
      'Content-Type: application/octet-stream; name="bin.dat"',
      'Content-Transfer-Encoding: x-unknown',
      '',
      '\u00ff\u00fe raw bytes',
      '--b--',
      '',
    ].join('\r\n');
    const id = await mx.send(['x@encodings.test'], { raw });
    t.is(await processReceived(mx.deps, id), 'processed');
    const email = await p.db('received_emails').where({ id }).first();
    t.is(email.team_id, team.id);
    t.true(email.dropped_reason === null || email.dropped_reason === 'parse_failed', String(email.dropped_reason));
    t.is(typeof email.subject, 'string');
  },
);

test.serial('a zip-bomb-like attachment is stored as the bytes received, never expanded', async (t) => {
  const { team } = await mx.receivingTeam('bomb.test');
  // 64 MB of zeros deflate to ~64 KB: a receiver that inflated attachments would blow up here.
  const bomb = deflateRawSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
  t.true(bomb.length < 200 * 1024);
  const id = await mx.send(['x@bomb.test'], {
    from: 'a@sender.test',
    subject: 'bomb',
    text: 'see attached',
    attachments: [{ filename: 'bomb.gz', content: bomb, contentType: 'application/gzip' }],
  });
  t.is(await processReceived(mx.deps, id), 'processed');
  const rows = await p.db('received_attachments').where({ email_id: id, team_id: team.id });
  t.is(rows.length, 1);
  t.is(rows[0].size, bomb.length, 'the compressed size: nothing was inflated');
  t.deepEqual(await p.deps.blobs.get(rows[0].blob_key), bomb);
});

test.serial(
  'HTML with scripts is kept as data: the html field is a JSON string, and an HTML attachment downloads as application/octet-stream',
  async (t) => {
    const { team } = await mx.receivingTeam('script.test');
    const html = '<p onclick="steal()">hi</p><script>alert(document.cookie)</script>';
    const id = await mx.send(['x@script.test'], {
      from: 'a@sender.test',
      subject: 'scripts',
      html,
      attachments: [{ filename: 'page.html', content: `<html><body>${html}</body></html>`, contentType: 'text/html' }],
    });
    t.is(await processReceived(mx.deps, id), 'processed');
    const got = await p.request('GET', `/emails/receiving/${id}`, { key: team.key });
    t.is(got.status, 200);
    t.regex(got.headers.get('content-type') ?? '', /^application\/json/);
    t.true(String(got.body.html).includes('<script>'), 'the html is returned as data, as received');
    const list = await p.request('GET', `/emails/receiving/${id}/attachments`, { key: team.key });
    const url = new URL(list.body.data[0].download_url);
    const dl = await fetch(`${p.url}${url.pathname}${url.search}`, { headers: { 'user-agent': 'hostile-test' } });
    t.is(dl.status, 200);
    t.is(dl.headers.get('content-type'), 'application/octet-stream');
    t.is(dl.headers.get('x-content-type-options'), 'nosniff');
    t.regex(dl.headers.get('content-disposition') ?? '', /^attachment/);
  },
);
