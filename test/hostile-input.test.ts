// Strings PostgreSQL cannot hold (a NUL, an unpaired UTF-16 surrogate) and slow or oversized requests. Every
// string the API takes is refused with 422 naming its field, walked over every declared operation from the
// OpenAPI document; request logs never lose a row because of another row; a request slower than its deadline is
// 408 and oversized headers are 431, both in the Error shape.
import test from 'ava';
import net from 'node:net';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { makeUser, signIn, type CookieClient } from './helpers/accounts.ts';
import { newId } from '../shared/ids.ts';

let p: Platform;
let key: string;
/** Session routes refuse API keys: they are walked with a signed-in session instead. */
let session: CookieClient;
test.before(async () => {
  p = await startPlatform({ HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '1500' });
  key = (await p.createTeam()).key;
  await makeUser(p.db, 'hostile@people.test');
  session = await signIn(p.url, 'hostile@people.test');
});

/** One request of the walk, with the credential the operation takes. */
function call(op: Operation, method: string, path: string, body?: object) {
  if (op['x-service-permission'] === 'session') return session.request(method, path, body ? { body } : {});
  return p.request(method, path, { key, body });
}
test.after.always(async () => {
  await p?.close();
});

const HOSTILE = { nul: 'a\u0000b', surrogate: 'a\ud800b' };
type Operation = {
  'x-service-permission'?: string | null;
  responses?: Record<string, unknown>;
  requestBody?: { content?: Record<string, { schema: Schema }> };
  parameters?: { in: string; name: string; schema?: Schema }[];
};
type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  anyOf?: Schema[];
  oneOf?: Schema[];
};

/** The dotted paths of the string fields a body schema names (objects, array items and records, 3 levels deep). */
function stringFields(
  doc: { components: { schemas: Record<string, Schema> } },
  schema: Schema,
  prefix = '',
  depth = 0,
): string[] {
  const s = schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema;
  const variants = [...(s.anyOf ?? []), ...(s.oneOf ?? [])];
  if (variants.length) return [...new Set(variants.flatMap((v) => stringFields(doc, v, prefix, depth)))];
  const types = [s.type].flat();
  if (types.includes('string')) return [prefix];
  if (depth > 3) return [];
  const at = (k: string) => (prefix ? `${prefix}.${k}` : k);
  if (types.includes('array') && s.items) return stringFields(doc, s.items, at('0'), depth + 1);
  const out = Object.entries(s.properties ?? {}).flatMap(([k, v]) => stringFields(doc, v, at(k), depth + 1));
  if (typeof s.additionalProperties === 'object')
    out.push(...stringFields(doc, s.additionalProperties, at('X-Field'), depth + 1));
  return out;
}

/** `{a: {0: x}}`-like paths as the value to send: arrays where the path says a number. */
function bodyAt(path: string, value: string): unknown {
  const [head, ...rest] = path.split('.');
  const inner = rest.length ? bodyAt(rest.join('.'), value) : value;
  return /^\d+$/.test(head) ? [inner] : { [head]: inner };
}

test('every string of every operation, body and query: a NUL or a lone surrogate is 422 naming the field', async (t) => {
  const doc = (await p.request('GET', '/openapi.json')).body;
  let checked = 0;
  for (const [template, item] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
    for (const [method, op] of Object.entries(item)) {
      // `null` (/mcp) takes no API key: its tools run each operation's own schemas, walked here as routes.
      const permission = op['x-service-permission'];
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method) || permission === 'none' || permission === null)
        continue;
      if (op.responses?.['501']) continue; // not built: refused before anything is read
      const path = template.replace(/\{[^}]+\}/g, () => newId());
      const json = op.requestBody?.content?.['application/json']?.schema;
      const fields = json ? stringFields(doc, json) : [];
      for (const field of fields) {
        for (const [kind, value] of Object.entries(HOSTILE)) {
          const res = await call(op, method.toUpperCase(), path, bodyAt(field, value) as object);
          t.is(res.status, 422, `${method} ${template} body ${field} (${kind}): ${JSON.stringify(res.body)}`);
          t.is(res.body.errors?.[0]?.path, field, `${method} ${template} ${field}`);
          checked++;
        }
      }
      for (const param of (op.parameters ?? []).filter(
        (q) => q.in === 'query' && [q.schema?.type].flat().includes('string'),
      )) {
        const nul = await call(op, method.toUpperCase(), `${path}?${param.name}=a%00b`);
        t.is(nul.status, 422, `${method} ${template} query ${param.name}: ${JSON.stringify(nul.body)}`);
        t.is(nul.body.errors?.[0]?.path, param.name);
        // A lone surrogate has no UTF-8 form: its would-be bytes (ED A0 80) decode to U+FFFD, which is storable.
        const surrogate = await call(op, method.toUpperCase(), `${path}?${param.name}=a%ED%A0%80b`);
        t.true(surrogate.status < 500, `${method} ${template} query ${param.name}: ${surrogate.status}`);
        checked++;
      }
    }
  }
  t.log(`${checked} string fields checked`);
  t.true(checked > 60);
  // The cases the sweep found, by hand.
  const send = await p.request('POST', '/emails', {
    key,
    body: { from: 'a@x.test', to: 'b@y.test', subject: 'hi\u0000', text: 'x' },
  });
  t.is(send.status, 422);
  t.is(send.body.errors[0].path, 'subject');
  const batch = await p.request('POST', '/emails/batch', {
    key,
    body: [{ from: 'a@x.test', to: 'b@y.test', subject: 'ok', headers: { 'X-A': '\ud800' } }],
  });
  t.is(batch.body.errors[0].path, '0.headers.X-A');
  const search = await p.request('GET', '/emails/receiving?search=%00', { key });
  t.is(search.status, 422);
  t.is(search.body.errors[0].path, 'search');
  const param = await p.request('GET', '/suppressions/a%00b@x.test', { key });
  t.like(param, { status: 422, body: { name: 'invalid_parameter', errors: [{ path: 'id_or_email' }] } });
});

test("a row that PostgreSQL refuses never takes other teams' request logs with it; the hostile ones are kept escaped", async (t) => {
  const a = await p.createTeam();
  const b = await p.createTeam();
  const ua = `hostile-${newId()}`;
  // Finished together, the requests' log rows share one statement.
  await Promise.all([
    ...Array.from({ length: 5 }, () => p.request('GET', '/team', { key: a.key })),
    p.request('POST', '/topics', { key: b.key, body: { name: 'x\u0000y' }, userAgent: ua }),
    p.request('POST', '/topics', { key: b.key, body: { name: 'x\ud800y' }, userAgent: ua }),
  ]);
  const logsOf = async (team: { key: string }) =>
    (await p.request('GET', '/logs?limit=100', { key: team.key })).body.data;
  t.is((await logsOf(a)).filter((l: { endpoint: string }) => l.endpoint === '/team').length, 5);
  const hostile = (await logsOf(b)).filter((l: { user_agent: string }) => l.user_agent === ua);
  t.is(hostile.length, 2);
  const bodies = await Promise.all(
    hostile.map(
      async (l: { id: string }) => (await p.request('GET', `/logs/${l.id}`, { key: b.key })).body.request_body,
    ),
  );
  t.deepEqual(bodies.map((x) => x.name).sort(), ['x\\u0000y', 'x\\ud800y']);
});

/** Writes `head` on a raw socket and answers everything the server sends until it closes, with the time it took. */
async function raw(head: string): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  const socket = net.connect(new URL(p.url).port as unknown as number, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d.toString('latin1')));
  socket.write(head);
  await new Promise((resolve) => socket.on('close', resolve));
  return { text, ms: performance.now() - started };
}
const jsonOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

test('a body shorter than its Content-Length is 408 in the Error shape once HTTP_REQUEST_TIMEOUT_MS has passed', async (t) => {
  const { text, ms } = await raw(
    `POST /topics HTTP/1.1\r\nHost: x\r\nUser-Agent: slow\r\nAuthorization: Bearer ${key}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":',
  );
  t.regex(text, /^HTTP\/1\.1 408 /);
  t.like(jsonOf(text), { statusCode: 408, name: 'validation_error' });
  t.true(ms < 1500 + 2500, `${ms} ms`);
});

test('headers that never end are 408; headers past the size limit are 431, both as JSON', async (t) => {
  const slow = await raw('GET /team HTTP/1.1\r\nHost: x\r\nUser-Agent: slow\r\n');
  t.regex(slow.text, /^HTTP\/1\.1 408 /);
  t.like(jsonOf(slow.text), { statusCode: 408, name: 'validation_error' });
  const big = await raw(`GET /team HTTP/1.1\r\nHost: x\r\nUser-Agent: big\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  t.regex(big.text, /^HTTP\/1\.1 431 /);
  t.like(jsonOf(big.text), { statusCode: 431, name: 'validation_error' });
});

test('reply_to is capped like to: at most 50 addresses', async (t) => {
  const many = Array.from({ length: 51 }, (_, i) => `r${i}@x.test`);
  const res = await p.request('POST', '/emails', {
    key,
    body: { from: 'a@x.test', to: 'b@y.test', subject: 's', text: 't', reply_to: many },
  });
  t.is(res.status, 422);
  t.is(res.body.errors[0].path, 'reply_to');
});
