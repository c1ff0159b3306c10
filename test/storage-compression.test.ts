// Large values are stored lz4-compressed (migration 20261123040000): an accepted email's body comes back byte for
// byte, and PostgreSQL reports the method it stored it with.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { insertEmail } from './helpers/emails.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

test('the compressed columns use lz4, and a body stored with it reads back unchanged', async (t) => {
  const { rows: methods } = await p.db
    .raw(`select c.relname as "table", a.attname as "column", a.attcompression as method
    from pg_attribute a join pg_class c on c.oid = a.attrelid
    where c.relname in ('emails', 'received_emails', 'delivery_attempts', 'request_logs', 'idempotency_keys', 'webhook_deliveries')
      and a.attname in ('text', 'html', 'transcript', 'request_body', 'response_body', 'payload') and a.attnum > 0`);
  t.is(methods.length, 9);
  t.deepEqual([...new Set(methods.map((m: { method: string }) => m.method))], ['l']);

  // An email row as the accept path writes it (the sending domain is not the point here).
  const team = await p.createTeam();
  const words = [
    'delivery',
    'message',
    'recipient',
    'domain',
    'signature',
    'bounce',
    'queue',
    'header',
    'body',
    'mailbox',
  ];
  let text = '';
  for (let i = 0; text.length < 12_000; i++) text += `${words[(i * 7) % words.length]}${i % 11 === 0 ? '\n' : ' '}`;
  const html = `<p>${text.replace(/\n/g, '</p><p>')}</p>`;
  const id = await insertEmail(p.db, p.deps.blobs, {
    teamId: team.id,
    domain: null,
    to: ['b@example.net'],
    text,
    html,
  });
  const {
    rows: [stored],
  } = await p.db.raw(
    'select pg_column_compression(text) as text_method, pg_column_compression(html) as html_method, text, html from emails where id = ?',
    [id],
  );
  t.is(stored.text_method, 'lz4');
  t.is(stored.html_method, 'lz4');
  t.is(stored.text, text);
  t.is(stored.html, html);
});
