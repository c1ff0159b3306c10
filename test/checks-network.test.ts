// The network half of the pre-send checks (CHECKS_NETWORK): links asked over HTTP against a loopback web server
// found through the loopback DNS (a 404 fails, a 500 or a timeout warns, a HEAD refused is asked with GET), image
// sizes from Content-Length, and the SSRF guard: with private targets not allowed, a link to a loopback address is
// not fetched at all.
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSendingWorld, type SendingWorld } from './helpers/sending.ts';
import { startPlatform, type Platform } from './helpers/platform.ts';

let w: SendingWorld;
let guarded: Platform;
let server: http.Server;
let base: string;
const hits: string[] = [];

test.before(async () => {
  server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    if (req.url === '/ok') return res.writeHead(200).end();
    if (req.url === '/gone') return res.writeHead(404).end();
    if (req.url === '/broken') return res.writeHead(500).end();
    if (req.url === '/get-only') return res.writeHead(req.method === 'HEAD' ? 405 : 200).end();
    if (req.url === '/huge.png') return res.writeHead(200, { 'content-length': String(6 * 1024 * 1024) }).end();
    if (req.url === '/slow') return; // never answers
    res.writeHead(200, { 'content-length': '2048' }).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  w = await startSendingWorld([], {
    CHECKS_NETWORK: 'true',
    CHECKS_NETWORK_ALLOW_PRIVATE_TARGETS: 'true',
    CHECKS_NETWORK_TIMEOUT_MS: '500',
  });
  w.dns.set('links.checks.test', 'A', ['127.0.0.1']);
  base = `http://links.checks.test:${port}`;
  guarded = await startPlatform({ CHECKS_NETWORK: 'true' });
});
test.after.always(async () => {
  await w?.close();
  await guarded?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

type Check = { code: string; status: string; message: string };
const text = 'Our June collection is here, with twelve new pieces made in small batches by the people who make them.';

test('links are asked: 404 fails, 500 and a timeout warn, HEAD refused is asked with GET; images are weighed', async (t) => {
  const { key } = await w.p.createTeam();
  const html = [
    `<p>${text}</p>`,
    `<a href="${base}/ok">ok</a>`,
    `<a href="${base}/gone">gone</a>`,
    `<a href="${base}/broken">broken</a>`,
    `<a href="${base}/get-only">get only</a>`,
    `<a href="${base}/slow">slow</a>`,
    `<img src="${base}/huge.png" alt="huge">`,
    `<a href="https://shop.test/unsubscribe">Unsubscribe</a>`,
  ].join('');
  const res = await w.p.request('POST', '/emails/checks', { key, body: { subject: 'June', html } });
  t.is(res.status, 200, res.text);
  const links = (res.body.checks as Check[]).filter((c) => c.code === 'links');
  const about = (path: string) => links.find((c) => c.message.includes(`${base}${path}`))?.status;
  t.is(about('/ok'), undefined, 'an answering link is no finding');
  t.is(about('/gone'), 'fail');
  t.is(about('/broken'), 'warn');
  t.is(about('/slow'), 'warn');
  t.is(about('/get-only'), undefined);
  t.true(hits.includes('HEAD /get-only') && hits.includes('GET /get-only'));
  t.true(hits.includes('HEAD /ok') && !hits.includes('GET /ok'), 'HEAD first, no body fetched');
  const weight = (res.body.checks as Check[]).filter((c) => c.code === 'image_weight');
  t.deepEqual(
    weight.map((c) => c.status),
    ['fail'],
  );
  t.regex(weight[0].message, /6144 KB/);
  t.false(
    hits.some((h) => h.includes('shop.test')),
    'only our server was asked',
  );
});

test('the SSRF guard: a private address is not fetched, the finding says so', async (t) => {
  const { key } = await guarded.createTeam();
  const { port } = server.address() as AddressInfo;
  const res = await guarded.request('POST', '/emails/checks', {
    key,
    body: { subject: 'June', html: `<p>${text}</p><a href="http://127.0.0.1:${port}/ssrf-probe">x</a>` },
  });
  t.is(res.status, 200, res.text);
  const link = (res.body.checks as Check[]).find((c) => c.code === 'links')!;
  t.is(link.status, 'warn');
  t.regex(link.message, /not checked: it is a private address/);
  t.false(
    hits.some((h) => h.includes('/ssrf-probe')),
    'nothing reached the server',
  );
});
