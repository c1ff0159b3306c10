// SMTP submission over one long session: the key and its team are looked up again at every MAIL FROM (a revoked
// key or a suspended team stops at the next message, quotas read the team as it is now); the replies carry
// enhanced status codes (ENHANCEDSTATUSCODES announced), exactly one each; the 51st recipient gets 452 4.5.3 and
// the message goes to the other 50; a message past the size limit is refused after its final dot, nothing kept.
import test from 'ava';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { mailDomain, sendingTeam, type SendingTeam } from './helpers/sending.ts';
import { rawSmtp, type RawSmtp } from './helpers/smtp-client.ts';
import { startSubmission, type Submission } from './helpers/submission.ts';

let p: Platform;
let dns: DnsServer;
let servers: Submission[] = [];
let port: number;
/** A listener whose size limit is 64 KiB, so an oversized message stays cheap to send. */
let smallPort: number;
const SMALL = 64 * 1024;

async function listen(options: { maxBytes?: number } = {}): Promise<number> {
  const server = await startSubmission(p.deps, { implicitTls: true, ...options });
  servers.push(server);
  return server.port;
}

test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address });
  mailDomain(dns, 'inbox-ses.test');
  port = await listen();
  smallPort = await listen({ maxBytes: SMALL });
});
test.after.always(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  await p?.close();
  await dns?.close();
});

const plain = (key: string) => `AUTH PLAIN ${Buffer.from(`\0apikey\0${key}`).toString('base64')}`;

async function session(key: string, at = port): Promise<RawSmtp> {
  const s = await rawSmtp(at);
  await s.send('EHLO client.test');
  const auth = await s.send(plain(key));
  if (!auth.startsWith('235')) throw new Error(`AUTH: ${auth}`);
  return s;
}

/** One transaction; answers the first refusal (MAIL or RCPT) or the reply to the message. */
async function message(s: RawSmtp, team: SendingTeam, subject: string, to = ['ann@inbox-ses.test']): Promise<string> {
  const mail = await s.send(`MAIL FROM:<a@${team.domain}>`);
  if (!mail.startsWith('250')) return mail;
  for (const r of to) {
    const rcpt = await s.send(`RCPT TO:<${r}>`);
    if (!rcpt.startsWith('250')) return rcpt;
  }
  await s.send('DATA');
  return s.send(`From: a@${team.domain}\r\nTo: ${to[0]}\r\nSubject: ${subject}\r\n\r\nhello\r\n.`);
}

const stored = async (team: SendingTeam, subject: string) =>
  Number((await p.db('emails').where({ team_id: team.id, subject }).count({ n: '*' }))[0].n);
const QUEUED = /^250 2\.0\.0 OK: queued as [0-9a-f-]{36}$/;
/** The emails a team has blobs of (each keeps its raw message and attachments under emails/<team>/<email>/). */
const blobbed = (team: SendingTeam) => readdir(path.join(p.config.BLOB_DIR, 'emails', team.id)).catch(() => []);

test('a key revoked mid-session is refused at the next MAIL FROM with 550 5.7.8; nothing more is stored', async (t) => {
  const team = await sendingTeam(p, dns);
  const key = (
    await p.request('POST', '/api-keys', { key: team.key, body: { name: 'smtp', permission: 'sending_access' } })
  ).body;
  const s = await session(key.token);
  t.regex(await message(s, team, 'before revoke'), QUEUED);
  t.is((await p.request('DELETE', `/api-keys/${key.id}`, { key: team.key })).status, 200);
  t.regex(await message(s, team, 'after revoke'), /^550 5\.7\.8 This API key has been revoked/);
  t.regex(await s.send('RCPT TO:<ann@inbox-ses.test>'), /^503 /, 'no transaction was opened');
  s.close();
  t.is(await stored(team, 'before revoke'), 1);
  t.is(await stored(team, 'after revoke'), 0);
});

test('a team suspended mid-session is refused at the next MAIL FROM with 550 5.7.8, and sends again once lifted', async (t) => {
  const team = await sendingTeam(p, dns);
  const s = await session(team.key);
  t.regex(await message(s, team, 'before suspension'), QUEUED);
  await p.db('teams').where({ id: team.id }).update({ status: 'suspended', suspended_at: new Date() });
  t.regex(await message(s, team, 'while suspended'), /^550 5\.7\.8 This API key belongs to a suspended team$/);
  await p.db('teams').where({ id: team.id }).update({ status: 'active', suspended_at: null });
  t.regex(await message(s, team, 'after suspension'), QUEUED);
  s.close();
  t.is(await stored(team, 'while suspended'), 0);
  t.is(await stored(team, 'after suspension'), 1);
});

test('a daily quota set mid-session holds for the next message: 451 4.7.1, nothing stored', async (t) => {
  const team = await sendingTeam(p, dns);
  const s = await session(team.key);
  t.regex(await message(s, team, 'quota 1'), QUEUED);
  // Set after AUTH: the session must read the team as it is at each message, not as it was at AUTH.
  await p.db('teams').where({ id: team.id }).update({ daily_send_limit: 1 });
  t.regex(await message(s, team, 'quota 2'), /^451 4\.7\.1 You have reached your daily sending quota of 1 emails/);
  s.close();
  t.is(await stored(team, 'quota 2'), 0);
});

test("ENHANCEDSTATUSCODES: announced; smtp-server's own replies and ours carry exactly one code", async (t) => {
  const team = await sendingTeam(p, dns);
  const s = await rawSmtp(port);
  t.regex(s.greeting, /^220 \S+ ESMTP/, 'the greeting carries none (RFC 2034 §3)');
  t.regex(await s.send('EHLO client.test'), /^250[ -]ENHANCEDSTATUSCODES$/m);
  t.regex(await s.send(`MAIL FROM:<a@${team.domain}>`), /^530 5\.7\.0 /, 'MAIL before AUTH');
  t.regex(await s.send('WHATEVER'), /^500 5\.5\.2 /, 'an unknown command');
  t.is(await s.send(plain('rk_nope')), '535 5.7.8 Authentication credentials invalid');
  t.regex(await s.send(plain(team.key)), /^235 2\.7\.0 /);
  t.regex(await s.send(`MAIL FROM:<a@${team.domain}>`), /^250 2\.1\.0 /);
  t.regex(await s.send('RCPT TO:<ann@inbox-ses.test>'), /^250 2\.1\.5 /);
  t.regex(await s.send('DATA'), /^354 /);
  const refused = await s.send('From: a@not-ours.test\r\nTo: ann@inbox-ses.test\r\nSubject: codes\r\n\r\nx\r\n.');
  t.regex(refused, /^550 5\.7\.1 The not-ours\.test domain is not verified\./);
  t.notRegex(refused, /^\d{3} \d\.\d+\.\d+ \d\.\d+\.\d+/, "one code, not the library's and ours");
  t.regex(await message(s, team, 'codes ok'), QUEUED);
  s.close();
});

test('51 recipients: the 51st gets 452 4.5.3, the message goes to the other 50 and the 51st is not stored', async (t) => {
  const team = await sendingTeam(p, dns);
  const s = await session(team.key);
  t.regex(await s.send(`MAIL FROM:<a@${team.domain}>`), /^250/);
  const to = Array.from({ length: 51 }, (_, i) => `r${i + 1}@inbox-ses.test`);
  const replies: string[] = [];
  for (const r of to) replies.push(await s.send(`RCPT TO:<${r}>`));
  t.true(
    replies.slice(0, 50).every((r) => r.startsWith('250 ')),
    replies.slice(0, 50).find((r) => !r.startsWith('250 ')),
  );
  t.is(replies[50], '452 4.5.3 At most 50 recipients per message');
  // A recipient already accepted is not refused again: its entry is replaced, not counted twice.
  t.regex(await s.send('RCPT TO:<R7@inbox-ses.test>'), /^250 /);
  t.regex(await s.send('DATA'), /^354/);
  const reply = await s.send(`From: a@${team.domain}\r\nTo: r1@inbox-ses.test\r\nSubject: fifty\r\n\r\nhello\r\n.`);
  t.regex(reply, QUEUED);
  s.close();
  const id = /queued as (\S+)/.exec(reply)![1];
  const stored = await p.db('email_recipients').where({ email_id: id }).pluck('address');
  t.is(stored.length, 50);
  t.deepEqual(stored.map((a: string) => a.toLowerCase()).sort(), to.slice(0, 50).sort());
  t.false(stored.includes('r51@inbox-ses.test'));
});

test('past the size limit without SIZE: 552 5.3.4 after the final dot, nothing stored, the session goes on', async (t) => {
  const team = await sendingTeam(p, dns);
  const s = await session(team.key, smallPort);
  t.regex(await s.send(`MAIL FROM:<a@${team.domain}>`), /^250/);
  t.regex(await s.send('RCPT TO:<ann@inbox-ses.test>'), /^250/);
  t.regex(await s.send('DATA'), /^354/);
  const line = `${'y'.repeat(998)}\r\n`;
  const body = `From: a@${team.domain}\r\nTo: ann@inbox-ses.test\r\nSubject: too big\r\n\r\n${line.repeat(Math.ceil((SMALL * 16) / line.length))}.\r\n`;
  t.is(await s.send(Buffer.from(body), true), `552 5.3.4 The message is larger than ${SMALL} bytes`);
  const after = await message(s, team, 'small after big');
  t.regex(after, QUEUED);
  s.close();
  t.is(await stored(team, 'too big'), 0);
  t.is(await stored(team, 'small after big'), 1);
  t.deepEqual(await blobbed(team), [], 'nothing in the blob store (the small message is kept in email_raw)');
  t.deepEqual(
    await p.db('email_raw').where({ team_id: team.id }).pluck('email_id'),
    [/queued as (\S+)/.exec(after)![1]],
    'only the second message is stored',
  );
});
