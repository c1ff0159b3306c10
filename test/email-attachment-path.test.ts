// Attachments by `path`: fetched once at acceptance from a real loopback HTTPS server (a self-signed certificate
// trusted through ATTACHMENT_FETCH_CA_FILE), the bytes delivered in the MIME to the recipient's MX, and every
// refusal a 422 in the Error shape with nothing stored: not https, private target (loopback, metadata, a name
// resolving to a private address), unreachable, timeout, non-2xx (redirects included), too large.
import test from 'ava';
import https from 'node:https';
import http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { simpleParser } from 'mailparser';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { sendingTeam, type SendingTeam } from './helpers/sending.ts';
import { isError } from './helpers/http.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { liftSandbox } from '../shared/teams/teams.ts';
import { fetchAttachment, MAX_FETCH_BYTES, type FetchOptions } from '../shared/emails/fetch-attachment.ts';
import { createResolver } from '../shared/dns/resolver.ts';
import { ServiceError } from '../shared/errors.ts';

const HOST = 'files.attach-test.test';
const pdf = randomBytes(200_000);
const csv = Buffer.from('id,total\n42,19.99\n');

let w: MtaWorld;
let strict: Platform;
let dir: string;
let httpsServer: https.Server;
let plainServer: http.Server;
let base: string; // https://files.attach-test.test:<port>
let ipBase: string; // https://127.0.0.1:<port>
let plainBase: string;
let team: { id: string; key: string; domain: string };
let strictTeam: SendingTeam;
let resolver: FetchOptions['resolver'];

function routes(req: http.IncomingMessage, res: http.ServerResponse) {
  const url = new URL(req.url ?? '/', 'https://x');
  if (url.pathname === '/files/invoice-42.pdf')
    return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(pdf);
  if (url.pathname === '/files/report')
    return res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' }).end(csv);
  if (url.pathname === '/files/Quarterly%20Report.txt') return res.writeHead(200).end('quarterly');
  if (url.pathname === '/missing.pdf') return res.writeHead(404).end('no');
  if (url.pathname === '/moved.pdf')
    return res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
  if (url.pathname === '/slow.pdf') return; // never answers
  if (url.pathname === '/truncated.pdf') {
    res.writeHead(200, { 'content-length': '100000' });
    res.write(Buffer.alloc(1000));
    return setTimeout(() => res.destroy(), 20);
  }
  if (url.pathname === '/announced-huge.bin')
    return res.writeHead(200, { 'content-length': String(MAX_FETCH_BYTES + 1) }).end();
  if (url.pathname === '/endless.bin') {
    // Chunked, no length announced: the fetch must stop reading past the cap by itself.
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const pump = () => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', pump);
    };
    return pump();
  }
  res.writeHead(404).end();
}

async function listen(server: http.Server | https.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

test.before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pw-attach-'));
  const pems = await generate([{ name: 'commonName', value: HOST }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: HOST },
          { type: 2, value: 'once.attach-test.test' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  } as never);
  const caFile = path.join(dir, 'ca.pem');
  await writeFile(caFile, pems.cert);
  httpsServer = https.createServer({ key: pems.private, cert: pems.cert }, routes);
  plainServer = http.createServer(routes);
  const port = await listen(httpsServer);
  base = `https://${HOST}:${port}`;
  ipBase = `https://127.0.0.1:${port}`;
  plainBase = `http://127.0.0.1:${await listen(plainServer)}`;

  // 5 s a fetch: a TLS fetch from the test's own server must fit in it on a loaded CI machine (1 s once did not);
  // the slow file never answers, so its case takes the whole budget.
  const fetchEnv = { ATTACHMENT_FETCH_CA_FILE: caFile, ATTACHMENT_FETCH_TIMEOUT_MS: '5000' };
  // The test server is on loopback: this world allows private targets; `strict` keeps the guard on.
  w = await startMtaWorld({ env: { ...fetchEnv, ATTACHMENT_FETCH_ALLOW_PRIVATE_TARGETS: 'true' } });
  w.dns.set(HOST, 'A', ['127.0.0.1']);
  w.dns.set('private.attach-test.test', 'A', ['10.20.30.40']);
  w.dns.set('once.attach-test.test', 'A', ['127.0.0.1']);
  w.mx('attach-inbox.test');
  const created = await w.p.createTeam();
  await liftSandbox(w.p.db, created.id, 'us-east-1');
  team = { ...created, domain: (await w.sendingDomain(created, 'attach-sender.test')).name };
  strict = await startPlatform({ ...fetchEnv, DNS_SERVERS: w.dns.address });
  strictTeam = await sendingTeam(strict, w.dns);
  resolver = createResolver({ servers: [w.dns.address], timeoutMs: 2000, tries: 1 });
});
test.after.always(async () => {
  httpsServer?.closeAllConnections();
  plainServer?.closeAllConnections();
  await Promise.all([httpsServer, plainServer].map((s) => new Promise<void>((r) => (s ? s.close(() => r()) : r()))));
  await strict?.close();
  await w?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const send = (p: Platform, key: string, from: string, attachments: unknown[], subject = 'files') =>
  p.request('POST', '/emails', {
    key,
    body: { from, to: 'ann@attach-inbox.test', subject, text: 'see attached', attachments },
  });

test('path attachments are fetched over https and their bytes reach the delivered MIME, DKIM-signed', async (t) => {
  const res = await send(w.p, team.key, `billing@${team.domain}`, [
    { path: `${base}/files/invoice-42.pdf` },
    { path: `${base}/files/report?month=11` },
    { path: `${base}/files/Quarterly%20Report.txt`, filename: 'q4.txt' },
    { content: Buffer.from('given inline').toString('base64'), filename: 'note.txt' },
  ]);
  t.is(res.status, 200, res.text);
  await processDelivery(w.deps, res.body.id);
  const [message] = w.sink.deliveredTo('ann@attach-inbox.test');
  t.truthy(message);
  const parsed = await simpleParser(message.raw);
  const byName = new Map(parsed.attachments.map((a) => [a.filename, a]));
  t.deepEqual(
    parsed.attachments.map((a) => a.filename),
    ['invoice-42.pdf', 'report', 'q4.txt', 'note.txt'],
    'the filename defaults to the last path segment',
  );
  t.true(byName.get('invoice-42.pdf')!.content.equals(pdf), 'the fetched bytes, unchanged');
  t.is(byName.get('invoice-42.pdf')!.contentType, 'application/pdf', 'a named file takes the type of its extension');
  t.true(byName.get('report')!.content.equals(csv));
  t.is(byName.get('report')!.contentType, 'text/csv', "a file without an extension takes the server's type");
  t.is(byName.get('q4.txt')!.content.toString(), 'quarterly');
  t.is(byName.get('note.txt')!.content.toString(), 'given inline');
  t.deepEqual(
    (await w.verifyDkim(message.raw)).map((v) => v.status),
    ['pass'],
  );
  const stored = await w.p.db('email_attachments').where({ email_id: res.body.id }).orderBy('filename');
  t.is(stored.length, 4);
});

test('the name is resolved once through DNS_SERVERS and the connection goes to the checked address', async (t) => {
  // The system resolver does not know this name: a re-resolution at connect time could not reach the server.
  const once = 'once.attach-test.test';
  const got = await fetchAttachment(`${base.replace(HOST, once)}/files/report`, 0, {
    resolver,
    allowHttp: false,
    allowPrivate: true,
    timeoutMs: 10_000, // not what this test is about: time to spare on a busy machine
    caFile: path.join(dir, 'ca.pem'),
  });
  t.true(got.content.equals(csv));
  t.is(w.dns.queries.filter((q) => q.name === once && q.type === 'A').length, 1);
});

test('http:// is refused unless ATTACHMENT_FETCH_ALLOW_HTTP; an untrusted certificate is unreachable', async (t) => {
  const res = await send(w.p, team.key, `billing@${team.domain}`, [{ path: `${plainBase}/files/report` }]);
  isError(t, res, 422, 'invalid_attachment');
  t.regex(res.body.message, /\(not_https\)/);
  t.is(res.body.details, undefined, "details carries only the spec's fields");
  t.deepEqual(
    res.body.errors.map((e: { path: string }) => e.path),
    ['attachments.0.path'],
  );
  const allowed = await fetchAttachment(`${plainBase}/files/report`, 0, {
    resolver,
    allowHttp: true,
    allowPrivate: true,
    timeoutMs: 10_000, // not what this test is about: time to spare on a busy machine
  });
  t.true(allowed.content.equals(csv));
  // Without the CA file the self-signed certificate is not trusted.
  const untrusted = await t.throwsAsync(
    fetchAttachment(`${base}/files/report`, 2, { resolver, allowHttp: false, allowPrivate: true, timeoutMs: 10_000 }),
  );
  t.like((untrusted as ServiceError).toBody(), {
    statusCode: 422,
    name: 'invalid_attachment',
    errors: [{ path: 'attachments.2.path' }],
  });
  t.regex((untrusted as ServiceError).message, /\(unreachable\)/);
});

test('private, loopback, link-local and metadata targets are refused before any connection', async (t) => {
  for (const url of [
    `${ipBase}/files/report`,
    'https://169.254.169.254/latest/meta-data/',
    'https://private.attach-test.test/x.pdf',
    'https://[::1]/x.pdf',
    'https://[::ffff:127.0.0.1]/x.pdf',
    'https://10.0.0.1/x.pdf',
  ]) {
    const res = await send(strict, strictTeam.key, `billing@${strictTeam.domain}`, [
      { content: 'aGk=', filename: 'a.txt' },
      { path: url },
    ]);
    isError(t, res, 422, 'invalid_attachment');
    t.regex(res.body.message, /\(private_target\)/, url);
    t.deepEqual(
      res.body.errors.map((e: { path: string }) => e.path),
      ['attachments.1.path'],
    );
  }
  t.is((await strict.db('emails').where({ team_id: strictTeam.id })).length, 0, 'nothing stored');
});

test('unreachable, slow, non-2xx, redirected, truncated and oversized files: 422 with the reason, nothing stored', async (t) => {
  const cases: [string, string, RegExp][] = [
    [`${base}/missing.pdf`, 'http_status', /answered 404/],
    [`${base}/moved.pdf`, 'http_status', /answered 302; redirects are not followed/],
    [`${base}/slow.pdf`, 'timeout', /did not answer within 5 s/],
    [`${base}/truncated.pdf`, 'unreachable', /broke off/],
    ['https://127.0.0.1:1/x.pdf', 'unreachable', /could not be reached/],
    ['https://nowhere.attach-test.test/x.pdf', 'unreachable', /was not found/],
    [`${base}/announced-huge.bin`, 'too_large', /larger than the 31457280 bytes left in the message/],
    ['not a url', 'invalid_url', /not a URL/],
    ['ftp://files.attach-test.test/x.pdf', 'not_https', /only https/],
  ];
  for (const [url, reason, message] of cases) {
    const res = await send(w.p, team.key, `billing@${team.domain}`, [{ path: url }], 'refused');
    isError(t, res, 422, 'invalid_attachment');
    t.true(res.body.message.includes(`(${reason})`), url);
    t.regex(res.body.errors[0].message, message, url);
  }
  t.is((await w.p.db('emails').where({ team_id: team.id, subject: 'refused' })).length, 0, 'nothing stored');
});

test('a file that never ends is cut at the cap: too_large, not read on', async (t) => {
  // Directly, with time to spare: 30 MB over TLS can take longer than the platform's 5 s budget on a busy machine,
  // and then the answer is (rightly) a timeout.
  const endless = await t.throwsAsync(
    fetchAttachment(`${base}/endless.bin`, 1, {
      resolver,
      allowHttp: false,
      allowPrivate: true,
      timeoutMs: 120_000,
      caFile: path.join(dir, 'ca.pem'),
    }),
  );
  t.like((endless as ServiceError).toBody(), {
    statusCode: 422,
    name: 'invalid_attachment',
    errors: [{ path: 'attachments.1.path' }],
  });
  t.regex((endless as ServiceError).toBody().message, /\(too_large\): .*larger than the 31457280 bytes/);
});
