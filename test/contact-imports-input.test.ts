// Bad input to POST /contacts/imports, each refused in the Error shape naming the field (and the line where the file
// is at fault), and each leaving nothing behind: no import row, no file (nor a temporary one) in the blob store.
// No worker runs here: everything is decided by the api while it takes the upload.
import test from 'ava';
import { readdir } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { createSegment, createTopic, created } from './helpers/contacts.ts';
import { importForm, postForm, upload, type UploadFields } from './helpers/imports.ts';
import { IMPORT_MAX_BYTES } from '../shared/imports/limits.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

/** Every file under the team's imports folder of the blob store (temporary ones included). */
async function storedFiles(teamId: string): Promise<string[]> {
  try {
    return await readdir(path.join(p.config.BLOB_DIR, 'imports', teamId));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

async function nothingLeft(t: { deepEqual: (a: unknown, b: unknown, m?: string) => void }, team: TestTeam) {
  t.deepEqual(await p.db('contact_imports').where({ team_id: team.id }).pluck('id'), [], 'no import row');
  t.deepEqual(await storedFiles(team.id), [], 'no file');
}

/** A CSV of exactly `bytes` bytes: a header and rows of addresses, the last row padded. */
function csvOfSize(bytes: number): Buffer {
  const buf = Buffer.alloc(bytes, 'x');
  let at = buf.write('email,pad\n');
  for (let i = 0; at + 40 < bytes; i++) at += buf.write(`u${String(i).padStart(9, '0')}@example.com,x\n`, at);
  buf.write('last@example.com,', at);
  buf[bytes - 1] = 0x0a;
  return buf;
}

type Case = [string, string | Buffer, UploadFields, number, string, RegExp];

const ok = 'email,first_name\na@example.com,Ann\n';

/** Refusals that need nothing of the team but a `seats` number property. */
const refusals: Case[] = [
  ['duplicate header', 'email,name,Email\nx@example.com,X,y\n', {}, 422, 'file', /`Email` twice.*columns 1 and 3/],
  ['a header without a name', 'email,,name\nx@example.com,,X\n', {}, 422, 'file', /no name for column 2/],
  [
    'no header (the first row is data)',
    'ann@example.com,Ann\nbob@example.com,Bob\n',
    {},
    422,
    'file',
    /no column for the address/,
  ],
  [
    'column_map names a missing column',
    ok,
    { column_map: { first_name: 'Given' } },
    422,
    'column_map.first_name',
    /`Given`, which is not a column/,
  ],
  [
    '10,000 columns',
    `${Array.from({ length: 10_000 }, (_, i) => `c${i}`).join(',')}\n`,
    {},
    422,
    'file',
    /10000 columns/,
  ],
  [
    'invalid UTF-8',
    Buffer.concat([Buffer.from('email\nok@example.com\nb'), Buffer.from([0xff, 0xfe]), Buffer.from('d@example.com\n')]),
    {},
    422,
    'file',
    /not UTF-8: line 3/,
  ],
  ['UTF-16', Buffer.from('\ufeffemail\na@example.com\n', 'utf16le'), {}, 422, 'file', /not UTF-8: line 1/],
  [
    'a quoted field never closed',
    'email,first_name\na@example.com,"Ann\nb@example.com,Bob\n',
    {},
    422,
    'file',
    /quoted field opened on line 2/,
  ],
  ['an empty file', '', {}, 422, 'file', /is empty/],
  ['only a byte order mark', '\ufeff', {}, 422, 'file', /is empty/],
  [
    'a row over 1 MB',
    `email,note\na@example.com,${'n'.repeat(1024 * 1024)}\n`,
    {},
    422,
    'file',
    /row larger than 1048576 bytes.*line 2/,
  ],
  [
    'an unknown property key',
    ok,
    { column_map: { properties: { nope: 'first_name' } } },
    422,
    'column_map.properties.nope',
    /no contact property has this key/,
  ],
  [
    "a stated type not the property's",
    ok,
    { column_map: { properties: { seats: { column: 'first_name', type: 'string' } } } },
    422,
    'column_map.properties.seats.type',
    /is string, but the property's type is number/,
  ],
  ['column_map not JSON', ok, { column_map: '{email:' }, 422, 'column_map', /not valid JSON/],
  [
    'column_map with an unknown key',
    ok,
    { column_map: { firstname: 'first_name' } },
    422,
    'column_map.firstname',
    /not a key/,
  ],
  ['on_conflict neither upsert nor skip', ok, { on_conflict: 'merge' }, 422, 'on_conflict', /upsert.*skip/],
  ['segments not an array', ok, { segments: '{"id":"x"}' }, 422, 'segments', /array/],
];

test('every refusal names the field (and the line), and leaves nothing behind', async (t) => {
  const team = await p.createTeam('Bad input');
  const other = await p.createTeam('Other');
  await created(p, team, '/contact-properties', { key: 'seats', type: 'number' });
  const foreignSegment = await createSegment(p, other);
  const foreignTopic = await createTopic(p, other);
  const cases: Case[] = [
    ...refusals,
    [
      "another team's segment",
      ok,
      { segments: [{ id: foreignSegment }] },
      422,
      'segments.0.id',
      /no segment of this team/,
    ],
    [
      "another team's topic",
      ok,
      { topics: [{ id: foreignTopic, subscription: 'opt_in' }] },
      422,
      'topics.0.id',
      /no topic of this team/,
    ],
  ];
  for (const [what, csv, fields, status, field, message] of cases) {
    const res = await upload(p, team, csv, fields);
    t.is(res.status, status, `${what}: ${res.text.slice(0, 300)}`);
    t.like(res.body, { statusCode: status, name: 'validation_error' }, what);
    t.is(res.body?.errors?.[0]?.path, field, what);
    t.regex(res.body?.errors?.[0]?.message ?? '', message, what);
    t.regex(
      res.body?.message ?? '',
      new RegExp(`\`${field.replace(/\./g, '\\.')}\``),
      `${what}: the message names the field`,
    );
    t.false(/at .*\.ts:\d+|select |insert /i.test(res.text), `${what}: no stack or SQL`);
  }
  await nothingLeft(t, team);
});

test('the form itself: no file, a text field for a file, two files, JSON instead of multipart', async (t) => {
  const team = await p.createTeam('Form');
  const noFile = new FormData();
  noFile.append('on_conflict', 'skip');
  const missing = await postForm(p, team.key, noFile);
  t.like(missing, { status: 422, body: { name: 'missing_required_field', errors: [{ path: 'file' }] } });

  const textField = new FormData();
  textField.append('file', 'email\na@example.com\n');
  t.like(await postForm(p, team.key, textField), { status: 422, body: { errors: [{ path: 'file' }] } });

  const two = importForm('email\na@example.com\n');
  two.append('file', new Blob(['email\nb@example.com\n']), 'second.csv');
  const twice = await postForm(p, team.key, two);
  t.like(twice, { status: 422, body: { name: 'validation_error', errors: [{ path: 'file' }] } });

  const json = await p.request('POST', '/contacts/imports', { key: team.key, body: { file: 'email\n' } });
  t.like(json, { status: 400, body: { name: 'validation_error' } });
  t.regex(json.body.message, /multipart\/form-data/);
  await nothingLeft(t, team);
});

test('50 MB is taken; 50 MB + 1 byte is 413 naming `file`, and nothing is left behind', async (t) => {
  t.timeout(120_000);
  const team = await p.createTeam('Size');
  const exactly = await upload(p, team, csvOfSize(IMPORT_MAX_BYTES));
  t.is(exactly.status, 201, exactly.text);
  const row = await p.db('contact_imports').where({ id: exactly.body.id }).first();
  t.is(Number(row.file_bytes), IMPORT_MAX_BYTES);
  t.is(await p.deps.blobs.size(row.blob_key), IMPORT_MAX_BYTES);
  await p.db('contact_imports').where({ id: row.id }).delete();
  await p.deps.blobs.delete(row.blob_key);

  const over = await upload(p, team, csvOfSize(IMPORT_MAX_BYTES + 1));
  t.is(over.status, 413, over.text.slice(0, 300));
  t.like(over.body, { statusCode: 413, name: 'validation_error', errors: [{ path: 'file' }] });
  t.regex(over.body.message, /`file`.*larger than 52428800 bytes/);
  await nothingLeft(t, team);
});

test('a client that goes away mid-upload leaves nothing behind', async (t) => {
  const team = await p.createTeam('Gone');
  const boundary = 'x-boundary-x';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  const req = request(`${p.url}/contacts/imports`, {
    method: 'POST',
    headers: {
      'user-agent': 'postwerk-tests/1.0',
      authorization: `Bearer ${team.key}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(10 * 1024 * 1024),
    },
  });
  req.on('error', () => {});
  req.write(head + 'email\n');
  for (let i = 0; i < 2000; i++) req.write(`user${i}@example.com\n`);
  // The api has started storing the part (its temporary file exists) before the client goes.
  await until(async () => (await storedFiles(team.id)).length > 0, { what: 'the upload being stored' });
  req.destroy();
  await until(async () => (await storedFiles(team.id)).length === 0, { what: 'the partial file removed' });
  await nothingLeft(t, team);
});

test('a body declared larger than the limit is 413 naming `file` before any of it is read', async (t) => {
  const team = await p.createTeam('Declared');
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(`${p.url}/contacts/imports`, {
      method: 'POST',
      headers: {
        'user-agent': 'postwerk-tests/1.0',
        authorization: `Bearer ${team.key}`,
        'content-type': 'multipart/form-data; boundary=b',
        'content-length': String(200 * 1024 * 1024),
      },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.write('--b\r\n'); // and nothing more: the answer must not wait for the rest
  });
  t.is(answer.status, 413);
  t.like(JSON.parse(answer.body), { name: 'validation_error', errors: [{ path: 'file' }] });
  await nothingLeft(t, team);
});
