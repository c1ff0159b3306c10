// What the api does with odd input: malformed or oversized bodies, malformed ids in paths, header injection
// attempts and client request ids. Every refusal is in the Error shape (CONTRACT.md).
import test from 'ava';
import net from 'node:net';
import { once } from 'node:events';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { fromNode, isError, nodeRequest, parseHttp, rawHttp } from './helpers/http.ts';
import { newId } from '../shared/ids.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
let key: string;
test.before(async () => {
  p = await startPlatform();
  key = (await p.createTeam()).key;
});
test.after.always(async () => {
  await p?.close();
});

test('bodies: malformed JSON and non-JSON types are 400; an empty JSON body is {}; unknown keys are ignored', async (t) => {
  for (const rawBody of ['{"name":', '{name: "x"}', '\u0000', '{"name":"a"}}', "{'name':'a'}"]) {
    const res = await p.request('POST', '/api-keys', { key, rawBody, headers: { 'content-type': 'application/json' } });
    isError(t, res, 400, 'validation_error');
  }
  for (const type of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
  ]) {
    const res = await p.request('POST', '/api-keys', {
      key,
      rawBody: '{"name":"a"}',
      headers: { 'content-type': type },
    });
    isError(t, res, 400, 'validation_error');
  }
  const noType = await p.request('POST', '/api-keys', { key, rawBody: '{"name":"a"}' });
  isError(t, noType, 400, 'validation_error');

  const empty = await p.request('POST', '/api-keys', {
    key,
    rawBody: '',
    headers: { 'content-type': 'application/json' },
  });
  isError(t, empty, 422, 'missing_required_field');
  t.is(empty.body.errors[0].path, 'name');
  const blank = await p.request('POST', '/api/v1/api-keys', {
    key,
    rawBody: ' \n',
    headers: { 'content-type': 'application/json' },
  });
  isError(t, blank, 422, 'missing_required_field');

  const extra = await p.request('POST', '/api-keys', {
    key,
    body: { name: 'extra', colour: 'blue', nested: { a: [1] } },
  });
  t.is(extra.status, 201);
  const stored = await p.db('api_keys').where({ id: extra.body.id }).first();
  t.is(stored.name, 'extra');
  t.false(JSON.stringify(stored).includes('blue'));
});

test('a body over BODY_LIMIT_BYTES is 413 in the Error shape, announced or streamed', async (t) => {
  const small = await startPlatform({ BODY_LIMIT_BYTES: '2048' });
  t.teardown(() => small.close());
  const team = await small.createTeam();
  const auth = {
    authorization: `Bearer ${team.key}`,
    'user-agent': 'postwerk-tests/1.0',
    'content-type': 'application/json',
  };
  const big = JSON.stringify({ name: 'a', padding: 'x'.repeat(3000) });

  isError(
    t,
    await small.request('POST', '/api-keys', {
      key: team.key,
      rawBody: big,
      headers: { 'content-type': 'application/json' },
    }),
    413,
    'validation_error',
  );
  // Just under the limit is read (and the unknown key ignored).
  const fits = JSON.stringify({ name: 'fits', padding: 'x'.repeat(1900) });
  t.is(
    (
      await small.request('POST', '/api-keys', {
        key: team.key,
        rawBody: fits,
        headers: { 'content-type': 'application/json' },
      })
    ).status,
    201,
  );

  // Content-Length larger than the limit: refused from the header, before the body is read.
  const head = (framing: string) =>
    `POST /api-keys HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nAuthorization: Bearer ${team.key}\r\nContent-Type: application/json\r\nConnection: close\r\n${framing}\r\n\r\n`;
  const announced = parseHttp(await rawHttp(small.url, [head('Content-Length: 100000'), '{"name":"a"']));
  isError(t, fromNode(announced), 413, 'validation_error');

  // No Content-Length: a chunked body that grows past the limit.
  const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
  const body = ['{"name":"a","padding":"', ...Array.from({ length: 40 }, () => 'x'.repeat(256)), '"}'];
  const streamed = parseHttp(
    await rawHttp(small.url, [head('Transfer-Encoding: chunked'), ...body.map(chunk), '0\r\n\r\n']),
  );
  isError(t, fromNode(streamed), 413, 'validation_error');
  // A client that goes away mid-body: the request ends (logged as a 400), it does not hang.
  const agent = `gone-${newId()}`;
  const socket = net.connect(Number(new URL(small.url).port), '127.0.0.1');
  await once(socket, 'connect');
  socket.write(head('Content-Length: 1000').replace('User-Agent: t', `User-Agent: ${agent}`) + '{"name":"a"');
  socket.destroy();
  const row: { response_status: number } = await until(
    () => small.db('request_logs').where({ user_agent: agent }).first(),
    { what: 'the request log', timeoutMs: 5000 },
  );
  t.is(row.response_status, 400);
  // A chunked body within the limit is fine.
  const ok = await nodeRequest(small.url, {
    method: 'POST',
    path: '/api-keys',
    headers: auth,
    chunks: [Buffer.from('{"name":'), Buffer.from('"chunked"}')],
  });
  t.is(ok.status, 201);
  t.is(
    await small
      .db('api_keys')
      .where({ team_id: team.id })
      .count<{ count: string }[]>('* as count')
      .then((r) => Number(r[0].count)),
    3,
  );
});

test('a malformed id in a path is 422 invalid_parameter naming it (or 404 where no route matches), never 500', async (t) => {
  const odd = [
    'not-a-uuid',
    '%00',
    'a%00b',
    '%20',
    '%ZZ',
    '%E0%A4%A',
    '%C0%AF',
    '..%2F..%2Fetc%2Fpasswd',
    "1'%20OR%20'1'%3D'1",
    '1;DROP%20TABLE%20api_keys--',
    'x'.repeat(5000),
    `${newId()}x`,
    newId().toUpperCase().slice(1),
    '00000000-0000-0000-0000-00000000000g',
    '%F0%9F%92%A9',
    '%0d%0aInjected:%20yes',
    '{id}',
    ':id',
    '*',
    '%2e%2e',
  ];
  for (const id of odd) {
    for (const path of [`/api-keys/${id}`, `/api/v1/logs/${id}`]) {
      for (const method of ['GET', 'DELETE', 'PATCH']) {
        if (method !== 'GET' && path.includes('/logs/')) continue;
        const res = await p.request(method, path, { key, body: method === 'PATCH' ? { name: 'x' } : undefined });
        // `..` takes the path to another route, which none matches.
        if (id === '%2e%2e') isError(t, res, 404, 'not_found');
        else {
          isError(t, res, 422, 'invalid_parameter');
          t.regex(res.body.message, /^The `id` in the path must (be a valid UUID|not contain a NUL)/);
          t.is(res.body.errors[0].path, 'id');
        }
        t.falsy(res.headers.get('injected'));
      }
    }
  }
  const stillThere = await p.db('api_keys').count<{ count: string }[]>('* as count');
  t.true(Number(stillThere[0].count) > 0);
});

test('X-Request-Id: a plain client id is echoed, anything odd is replaced by a fresh id', async (t) => {
  const plain = await p.request('GET', '/health', { headers: { 'x-request-id': 'abc-123_DEF.9' } });
  t.is(plain.headers.get('x-request-id'), 'abc-123_DEF.9');
  const none = await p.request('GET', '/health');
  t.regex(none.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  for (const given of ['a b', '<script>', 'a%0d%0aInjected:%20yes', 'a:b', 'ä', 'x'.repeat(129), 'a\tb', '"quoted"']) {
    const res = await p.request('GET', '/nope', { headers: { 'x-request-id': given } });
    const echoed = res.headers.get('x-request-id') ?? '';
    t.not(echoed, given);
    t.regex(echoed, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    t.falsy(res.headers.get('injected'));
    isError(t, res, 404, 'not_found');
  }
});

test('CR/LF in a header value never splits the response; nothing of the request is echoed as a header', async (t) => {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const end = 'Connection: close\r\n\r\n';
  const cases: { raw: string; echo?: 'a' | 'replaced' }[] = [
    // A well-formed request carrying an extra header: our answer must not name it.
    {
      raw: `GET /health HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\nX-Request-Id: a\r\nInjected: yes\r\n${end}`,
      echo: 'a',
    },
    { raw: `GET /health HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\nX-Request-Id: a\rInjected: yes\r\n${end}` },
    { raw: `GET /health HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\nX-Request-Id: a\nInjected: yes\r\n${end}` },
    { raw: `GET /health HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\nX-Request-Id: a\r\n Injected: yes\r\n${end}` },
    { raw: `GET /health HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\nX-Request-Id: a\u0000Injected: yes\r\n${end}` },
    { raw: `GET /health HTTP/1.1\r\nHost: x\r\nUser-Agent: a\rInjected: yes\r\n${end}` },
    { raw: `GET /health\r\nInjected: yes HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\n${end}` },
    {
      raw: `GET /%0d%0aInjected:%20yes HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\nX-Request-Id: a%0d%0aInjected:%20yes\r\n${end}`,
      echo: 'replaced',
    },
    {
      raw: `GET /health HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\nX-Request-Id: a\r\n\r\nHTTP/1.1 200 OK\r\nInjected: yes\r\n\r\n`,
    },
  ];
  let answeredByApp = 0;
  for (const { raw, echo } of cases) {
    const text = await rawHttp(p.url, raw);
    t.regex(text, /^HTTP\/1\.1 \d{3} /, JSON.stringify(raw));
    // One request, one answer: a single status line (the last case sent a second, bogus request).
    const statusLines = text.match(/^HTTP\/1\.[01] \d{3}/gm) ?? [];
    t.true(statusLines.length === 1 || raw.includes('\r\n\r\nHTTP/1.1'), `${JSON.stringify(raw)} → ${text}`);
    for (const response of text.split(/(?=^HTTP\/1\.[01] \d{3})/m)) {
      const head = response.split('\r\n\r\n')[0];
      t.notRegex(head, /^injected\s*:/im, `${JSON.stringify(raw)} → ${head}`);
      const requestId = /^x-request-id: (.*)$/im.exec(head)?.[1];
      if (requestId === undefined) continue; // refused by node's parser before the app
      answeredByApp++;
      if (echo === 'a') t.is(requestId, 'a');
      else if (echo === 'replaced') t.regex(requestId, uuid);
      else t.true(requestId === 'a' || uuid.test(requestId), requestId);
    }
  }
  t.true(answeredByApp >= 2);
});
