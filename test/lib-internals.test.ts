// Contract tests of shared/lib-internals/: each place that reaches into a library's internals is checked against
// the library as installed, so an upgrade that moves what it relies on fails here, by name, before anything
// ships. The recorded versions must match the installed ones: an upgrade re-reads these files first.
import path from 'node:path';
import test from 'ava';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { generateKeyPairSync } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { SMTPConnection as ServerConnection } from 'smtp-server/lib/smtp-connection.js';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { dkimSignatures, MAILAUTH_VERSION } from '../shared/lib-internals/mailauth-dkim.ts';
import { NODEMAILER_VERSION, sendPayloadDirectly } from '../shared/lib-internals/nodemailer-connection.ts';
import { MxSmtpServer, SMTP_SERVER_VERSION } from '../shared/lib-internals/smtp-server-greeting.ts';
import { correctReplies, corkReplies } from '../shared/lib-internals/smtp-server-replies.ts';
import { tlsCredentials } from '../shared/tls/certificate.ts';
import Handlebars from 'handlebars';
import { HANDLEBARS_VERSION, lastParseErrorPosition } from '../shared/lib-internals/handlebars-parse-position.ts';
import { rawSmtp } from './helpers/smtp-client.ts';
import MailComposer from 'nodemailer/lib/mail-composer';
import MimeNode from 'nodemailer/lib/mime-node';
import * as qp from 'nodemailer/lib/qp';
import * as base64 from 'nodemailer/lib/base64';
import { buildMessage } from '../shared/lib-internals/nodemailer-mime-build.ts';
import { root } from '../shared/layout.ts';

const installed = (name: string) =>
  JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version;

test('the versions the internals were written against are the ones installed', (t) => {
  t.is(installed('mailauth'), MAILAUTH_VERSION);
  t.is(installed('nodemailer'), NODEMAILER_VERSION);
  t.is(installed('smtp-server'), SMTP_SERVER_VERSION);
  t.is(installed('handlebars'), HANDLEBARS_VERSION);
});

test("handlebars: a failed parse's position is read back from its lexer, line 1-based and column 0-based", (t) => {
  for (const [source, line, column] of [
    ['abc {{#if x}}', 1, 13],
    ['one\ntwo {{x}\n', 2, 7],
    ['{{a|b}}', 1, 3],
  ] as const) {
    t.throws(() => Handlebars.parse(source));
    t.deepEqual(lastParseErrorPosition(), { line, column }, JSON.stringify(source));
  }
});

const message = Buffer.from(
  [
    'From: Shop <shop@lib-internals.test>',
    'To: a@example.com, b@example.com',
    'Subject: Order  \t shipped',
    ' (folded)',
    'Date: Tue, 24 Nov 2026 12:00:00 +0000',
    'Message-ID: <x@lib-internals.test>',
    'List-Unsubscribe: <https://u.test/x>',
    'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'X-Not-Signed: 1',
    '',
    '.leading dot',
    'trailing space   ',
    '',
    'Body with \t tabs',
    '',
    '',
    '',
  ].join('\r\n'),
);
const HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:List-Unsubscribe:List-Unsubscribe-Post';

test("mailauth: DKIM signatures composed from its parts are byte for byte its dkimSign's, and verify", async (t) => {
  const pem = (k: ReturnType<typeof generateKeyPairSync>['privateKey']) =>
    k.export({ type: 'pkcs8', format: 'pem' }) as string;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ed = generateKeyPairSync('ed25519');
  const signTime = new Date('2026-11-24T12:00:00Z');
  const sets = {
    rsa: [{ domain: 'lib-internals.test', selector: 'r1', key: rsa.privateKey }],
    ed25519: [{ domain: 'lib-internals.test', selector: 'e1', key: ed.privateKey }],
    both: [
      { domain: 'lib-internals.test', selector: 'r1', key: rsa.privateKey },
      { domain: 'lib-internals.test', selector: 'e1', key: ed.privateKey },
    ],
  };
  for (const [name, keys] of Object.entries(sets)) {
    const ours = dkimSignatures(message, keys, HEADERS, signTime);
    const theirs = await dkimSign(message, {
      signingDomain: keys[0].domain,
      selector: keys[0].selector,
      privateKey: pem(keys[0].key),
      canonicalization: 'relaxed/relaxed',
      headerList: HEADERS as unknown as string[],
      signTime,
      signatureData: keys.map((k) => ({ signingDomain: k.domain, selector: k.selector, privateKey: pem(k.key) })),
    });
    t.deepEqual(theirs.errors, [], name);
    t.is(ours, theirs.signatures, name);
    const records: Record<string, string> = {
      'r1._domainkey.lib-internals.test': `v=DKIM1; k=rsa; p=${rsa.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
      'e1._domainkey.lib-internals.test': `v=DKIM1; k=ed25519; p=${ed.publicKey.export({ type: 'spki', format: 'der' }).subarray(12).toString('base64')}`,
    };
    const verified = await dkimVerify(Buffer.concat([Buffer.from(ours), message]), {
      resolver: async (name: string, type: string) => {
        if (type !== 'TXT' || !records[name]) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
        return [[records[name]]];
      },
      curTime: signTime,
    });
    t.deepEqual(
      verified.results.map((r: { status: { result: string } }) => r.status.result),
      keys.map(() => 'pass'),
      name,
    );
  }
});

test('nodemailer: the connection members the mta relies on exist, and a prepared payload arrives as sent', async (t) => {
  const received: Buffer[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push(Buffer.concat(chunks));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as net.AddressInfo).port;
  const conn = new SMTPConnection({ host: '127.0.0.1', port, ignoreTLS: true });
  try {
    await new Promise<void>((resolve, reject) => conn.connect((err) => (err ? reject(err) : resolve())));
    const internals = conn as unknown as Record<string, unknown>;
    for (const member of ['_createSendStream', '_actionSMTPStream']) t.is(typeof internals[member], 'function', member);
    t.true(Array.isArray(internals._responseActions), '_responseActions');
    t.true(internals._socket instanceof net.Socket, '_socket');
    // Set only along the way (a transaction, a STARTTLS): read from the source where they are written.
    const source = readFileSync(path.join(root, 'node_modules/nodemailer/dist/cjs/smtp-connection/index.js'), 'utf8');
    t.regex(source, /this\._envelope = \(envelope \|\| \{\}\)/, '_envelope holds the transaction');
    t.regex(source, /this\.upgrading = true/, 'upgrading marks a STARTTLS under way');
    const lines: string[] = [];
    const prepare = sendPayloadDirectly(conn, () => lines);
    const body = Buffer.from('Subject: direct\r\n\r\n.dot line\r\nend\r\n');
    prepare(body);
    const info = await new Promise<SMTPConnection.SentMessageInfo>((resolve, reject) =>
      conn.send({ from: 'a@lib-internals.test', to: ['b@lib-internals.test'] }, body, (err, i) =>
        err ? reject(err) : resolve(i as SMTPConnection.SentMessageInfo),
      ),
    );
    t.regex(info.response, /^250 /);
    t.true('_envelope' in internals, '_envelope after a transaction');
    t.deepEqual(received, [body]);
    t.true(
      lines.some((l) => l.includes(`<${body.length + 1 + 3} bytes encoded mime message`)),
      'sent as one prepared payload',
    );
  } finally {
    conn.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('nodemailer: the MimeNode and encoder members the one-pass build reads exist; a raw node is left to build()', async (t) => {
  const tree = new MailComposer({
    from: 'a@lib-internals.test',
    to: 'b@lib-internals.test',
    subject: 'members',
    text: 'text',
    html: '<p>html</p>',
  }).compile();
  const members = tree as unknown as { _transforms: unknown; _processFuncs: unknown };
  t.true(Array.isArray(members._transforms));
  t.true(Array.isArray(members._processFuncs));
  tree.buildHeaders();
  t.is(tree.multipart, 'alternative');
  t.is(typeof tree.boundary, 'string');
  // A part's content type is set when its own headers are built, which the one-pass build does before its body.
  tree.childNodes[1].buildHeaders();
  t.is(tree.childNodes[1].contentType, 'text/html');
  for (const encoder of [new qp.Encoder({}), new base64.Encoder({})]) {
    const steps = encoder as unknown as { _transform: unknown; _flush: unknown };
    t.is(typeof steps._transform, 'function');
    t.is(typeof steps._flush, 'function');
  }
  // `_raw` set: the bytes are the caller's, and build() itself writes them.
  const raw = new MimeNode();
  raw.setRaw('Subject: raw\r\n\r\nas given\n');
  t.is((raw as unknown as { _raw: unknown })._raw, 'Subject: raw\r\n\r\nas given\n');
  t.true((await buildMessage(raw)).equals(await raw.build()));
});

test('smtp-server: the members the greeting pause and the reply corrections restate or wrap exist and still work', async (t) => {
  for (const member of ['init', '_setListeners', 'connectionReady', 'send'])
    t.is(typeof (ServerConnection.prototype as unknown as Record<string, unknown>)[member], 'function', member);
  for (const member of ['connect', '_onError', '_onClientConnect'])
    t.is(typeof (SMTPServer.prototype as unknown as Record<string, unknown>)[member], 'function', member);
  const server = new MxSmtpServer(
    {
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      size: 1000,
      hideENHANCEDSTATUSCODES: false,
      onMailFrom(_address, _session, callback) {
        callback(Object.assign(new Error('5.7.1 Refused by policy'), { responseCode: 550 }));
      },
    },
    1000,
  );
  correctReplies(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as net.AddressInfo).port;
  try {
    const started = Date.now();
    const smtp = await rawSmtp(port, { plain: true });
    t.true(Date.now() - started >= 950, 'the greeting waited out the pause');
    t.regex(smtp.greeting, /^220 /);
    const ehlo = await smtp.send('EHLO client.test');
    t.regex(ehlo, /ENHANCEDSTATUSCODES/);
    const refused = await smtp.send('MAIL FROM:<a@lib-internals.test>');
    t.is(refused, '550 5.7.1 Refused by policy', 'one enhanced code, ours');
    smtp.close();
    const again = Date.now();
    const second = await rawSmtp(port, { plain: true });
    t.true(server.passes.has('127.0.0.1'), 'the address that waited is remembered');
    t.true(Date.now() - again < 900, 'a client that waited once is greeted without the pause');
    second.close();
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('smtp-server: the replies of one tick leave in one write, a 220 at once, and EHLO + STARTTLS pipelined still upgrade', async (t) => {
  const creds = await tlsCredentials({}, 'localhost');
  const server = new SMTPServer({ key: creds.key, cert: creds.cert, authOptional: true, logger: false });
  corkReplies(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as net.AddressInfo).port;
  try {
    const socket = net.connect({ host: '127.0.0.1', port });
    let got = '';
    const until = (re: RegExp) =>
      new Promise<void>((resolve) => {
        const check = () => (re.test(got) ? (socket.off('data', onData), resolve()) : undefined);
        const onData = (d: Buffer) => {
          got += d.toString('latin1');
          check();
        };
        socket.on('data', onData);
        check();
      });
    await until(/^220 /m);
    // The connection as smtp-server holds it: its own send, wrapped (the members the wrapper relies on).
    const [connection] = [...server.connections] as unknown as {
      send(code: number, data: string): void;
      _socket: net.Socket;
    }[];
    connection.send(250, 'one');
    connection.send(250, 'two');
    t.is(connection._socket.writableCorked, 1, 'both replies held within the tick');
    await new Promise((resolve) => process.nextTick(resolve));
    t.is(connection._socket.writableCorked, 0, 'and written when it ends');
    connection.send(250, 'three');
    connection.send(220, 'go ahead');
    t.is(connection._socket.writableCorked, 0, 'a 220 leaves at once, with what was held before it');
    await until(/^220 go ahead/m);
    t.regex(got, /250 one\r\n250 two\r\n250 three\r\n220 go ahead/);

    // RFC 2920 lets STARTTLS end a pipelined group: its 220 must leave before the handshake starts.
    got = '';
    socket.write('EHLO client.test\r\nSTARTTLS\r\n');
    await until(/^220 /m);
    t.regex(got, /^250-/);
    const secure = tls.connect({ socket, rejectUnauthorized: false, servername: 'localhost' });
    await new Promise<void>((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject));
    const reply = new Promise<string>((resolve) => {
      let text = '';
      secure.on('data', (d) => {
        text += d.toString('latin1');
        if (/^250 /m.test(text)) resolve(text);
      });
    });
    secure.write('EHLO client.test\r\n');
    t.regex(await reply, /^250-/, 'EHLO answered over TLS');
    secure.destroy();
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
