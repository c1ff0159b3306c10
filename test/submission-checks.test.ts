// What SMTP submission checks in a message, as POST /emails does: exactly one From mailbox, a Sender header (when
// given) that is one mailbox at a domain the key may send from, the sandbox, a key bound to one domain, the daily
// quota and the bulk rule, which a List-Unsubscribe header satisfies. A refusal stores nothing: no row, no blob.
import test from 'ava';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { mailDomain, sendingTeam, verifiedDomain, type SendingTeam } from './helpers/sending.ts';
import { rawSmtp } from './helpers/smtp-client.ts';
import { startSubmission, type Submission } from './helpers/submission.ts';

let p: Platform;
let dns: DnsServer;
let server: Submission;
let port: number;
const BULK = 2;

test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address, BULK_DAILY_LIMIT: String(BULK) });
  mailDomain(dns, 'inbox-chk.test');
  server = await startSubmission(p.deps, { implicitTls: true });
  port = server.port;
});
test.after.always(async () => {
  await server?.close();
  await p?.close();
  await dns?.close();
});

/** One message in its own session: the first refusal on the way, or the reply to the message. */
async function submit(key: string, mailFrom: string, to: string, message: string): Promise<string> {
  const s = await rawSmtp(port);
  try {
    await s.send('EHLO client.test');
    const steps = [
      `AUTH PLAIN ${Buffer.from(`\0apikey\0${key}`).toString('base64')}`,
      `MAIL FROM:<${mailFrom}>`,
      `RCPT TO:<${to}>`,
      'DATA',
    ];
    for (const step of steps) {
      const reply = await s.send(step);
      if (!/^(235|250|354) /.test(reply)) return reply;
    }
    return await s.send(Buffer.from(`${message}\r\n.\r\n`), true);
  } finally {
    s.close();
  }
}

const mime = (head: string, subject: string, body = 'hello') =>
  `${head}To: ann@inbox-chk.test\r\nSubject: ${subject}\r\n\r\n${body}\r\n`;
const QUEUED = /^250 2\.0\.0 OK: queued as [0-9a-f-]{36}$/;

/** A second domain of the team, verified against the loopback DNS. */
async function secondDomain(team: SendingTeam, name: string): Promise<string> {
  await verifiedDomain(p, dns, team, name);
  return name;
}

/** Nothing of the team was kept: no email row, no blob (raw messages and attachments live under emails/<team>/). */
async function nothingStored(team: SendingTeam): Promise<[number, string[]]> {
  const [{ n }] = await p.db('emails').where({ team_id: team.id }).count({ n: '*' });
  const blobs = await readdir(path.join(p.config.BLOB_DIR, 'emails', team.id), { recursive: true }).catch(() => []);
  return [Number(n), blobs];
}

test('From must hold exactly one mailbox: none, two, a group or two From fields are refused with 550 5.7.1', async (t) => {
  const team = await sendingTeam(p, dns);
  const a = `a@${team.domain}`;
  const cases: [string, RegExp][] = [
    ['', /^550 5\.7\.1 The message has no From header$/],
    [`From: ${a}, b@${team.domain}\r\n`, /^550 5\.7\.1 The From header must hold exactly one mailbox/],
    ['From: undisclosed:;\r\n', /^550 5\.7\.1 The From header must hold exactly one mailbox/],
    [`From: authors: ${a}, b@${team.domain};\r\n`, /^550 5\.7\.1 The From header must hold exactly one mailbox/],
    [`From: ${a}\r\nFrom: b@${team.domain}\r\n`, /^550 5\.7\.1 The message has more than one From header$/],
    ['From: Nobody\r\n', /^550 5\.7\.1 The From header must hold exactly one mailbox/],
  ];
  for (const [head, expected] of cases)
    t.regex(await submit(team.key, a, 'ann@inbox-chk.test', mime(head, 'from check')), expected, JSON.stringify(head));
  t.deepEqual(await nothingStored(team), [0, []]);
  // The same message with one From goes.
  t.regex(await submit(team.key, a, 'ann@inbox-chk.test', mime(`From: Shop <${a}>\r\n`, 'from check')), QUEUED);
});

test('a Sender header must be one mailbox at a domain the key may send from; else 550 5.7.1, nothing stored', async (t) => {
  const team = await sendingTeam(p, dns);
  const other = await sendingTeam(p, dns);
  const from = `From: a@${team.domain}\r\n`;
  const cases: [string, RegExp][] = [
    [`Sender: s@${team.domain}, t@${team.domain}\r\n`, /^550 5\.7\.1 The Sender header must hold exactly one mailbox/],
    ['Sender: helpers:;\r\n', /^550 5\.7\.1 The Sender header must hold exactly one mailbox/],
    [
      `Sender: s@${team.domain}\r\nSender: t@${team.domain}\r\n`,
      /^550 5\.7\.1 The message has more than one Sender header$/,
    ],
    [
      'Sender: s@not-ours.test\r\n',
      /^550 5\.7\.1 Sender header s@not-ours\.test: The not-ours\.test domain is not verified\./,
    ],
    [
      `Sender: s@${other.domain}\r\n`,
      new RegExp(
        `^550 5\\.7\\.1 Sender header s@${other.domain.replace(/\./g, '\\.')}: The ${other.domain.replace(/\./g, '\\.')} domain is not verified`,
      ),
    ],
    ['Sender: "Bad" <s@x..y>\r\n', /^550 5\.7\.1 The Sender address s@x\.\.y has an invalid domain$/],
  ];
  for (const [sender, expected] of cases)
    t.regex(
      await submit(team.key, `a@${team.domain}`, 'ann@inbox-chk.test', mime(`${from}${sender}`, 'sender check')),
      expected,
      sender,
    );
  t.deepEqual(await nothingStored(team), [0, []]);

  // A key bound to one domain: a Sender at the team's other verified domain is refused as a From there would be.
  const second = await secondDomain(team, `second-${team.domain}`);
  const bound = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'b', permission: 'sending_access', domain_id: team.domainId },
  });
  t.is(bound.status, 201, bound.text);
  const withSender = (key: string, sender: string) =>
    submit(key, `a@${team.domain}`, 'ann@inbox-chk.test', mime(`${from}Sender: ${sender}\r\n`, 'bound sender'));
  t.regex(
    await withSender(bound.body.token, `s@${second}`),
    new RegExp(
      `^550 5\\.7\\.1 Sender header s@${second.replace(/\./g, '\\.')}: This API key may only send from its own domain`,
    ),
  );
  t.deepEqual(await nothingStored(team), [0, []]);

  t.regex(await withSender(bound.body.token, `Desk <desk@${team.domain}>`), QUEUED);
  t.regex(await withSender(team.key, `s@${second}`), QUEUED, "a key bound to no domain may name any of the team's");
});

test('a List-Unsubscribe header satisfies the bulk rule; without one the same message stops at BULK_DAILY_LIMIT', async (t) => {
  const team = await sendingTeam(p, dns);
  const a = `news@${team.domain}`;
  const send = (n: number, subject: string, extra: string) =>
    submit(
      team.key,
      a,
      `r${n}@inbox-chk.test`,
      `From: ${a}\r\n${extra}To: r${n}@inbox-chk.test\r\nSubject: ${subject}\r\n\r\nBig news\r\n`,
    );
  // Folded over two lines, as long values are.
  const header =
    'List-Unsubscribe: <mailto:leave@inbox-chk.test?subject=leave>,\r\n <https://shop.test/leave?u=1>\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n';
  const replies = [];
  for (let n = 1; n <= BULK + 1; n++) replies.push(await send(n, 'Weekly news', header));
  for (const r of replies) t.regex(r, QUEUED);
  const id = /queued as (\S+)/.exec(replies[0])![1];
  t.deepEqual((await p.db('emails').where({ id }).first()).headers, {
    'List-Unsubscribe': '<mailto:leave@inbox-chk.test?subject=leave>, <https://shop.test/leave?u=1>',
  });

  // The control: the same content without the header is refused once it would reach more than BULK people.
  for (let n = 1; n <= BULK; n++) t.regex(await send(n, 'Daily news', ''), QUEUED);
  t.regex(
    await send(BULK + 1, 'Daily news', ''),
    /^550 5\.7\.1 This message has reached 2 people today without an unsubscribe link/,
  );
  t.is((await p.db('emails').where({ team_id: team.id, subject: 'Daily news' })).length, BULK);
});

test('submitted mail keeps its own folding: a subject and a List-Unsubscribe that decode to long runs are accepted; the word alone is no link', async (t) => {
  const team = await sendingTeam(p, dns);
  const a = `news@${team.domain}`;
  // 31 encoded-words that decode to 992 letters with no space (more than a composed Subject line holds) and a
  // 988-character URL on a continuation line: every line within 998, which is all the raw message (delivered as
  // submitted) needs. The API's rule for the lines it composes does not apply here.
  const subject = Array.from({ length: 31 }, () => `=?us-ascii?Q?${'s'.repeat(32)}?=`).join('\r\n ');
  const unsubscribe = `List-Unsubscribe:\r\n <https://shop.test/leave?u=${'1'.repeat(960)}>\r\n`;
  const reply = await submit(
    team.key,
    a,
    'ann@inbox-chk.test',
    `From: ${a}\r\n${unsubscribe}To: ann@inbox-chk.test\r\nSubject: ${subject}\r\n\r\nhello\r\n`,
  );
  t.regex(reply, QUEUED);
  const email = await p
    .db('emails')
    .where({ id: /queued as (\S+)/.exec(reply)![1] })
    .first();
  t.is(email.subject, 's'.repeat(992));
  t.is(email.headers['List-Unsubscribe'].length, 988);

  // "Reply STOP to unsubscribe" is no link: the same message stops at BULK_DAILY_LIMIT.
  const send = (n: number) =>
    submit(
      team.key,
      a,
      `w${n}@inbox-chk.test`,
      `From: ${a}\r\nTo: w${n}@inbox-chk.test\r\nSubject: Words\r\n\r\nBig news. Reply STOP to unsubscribe.\r\n`,
    );
  for (let n = 1; n <= BULK; n++) t.regex(await send(n), QUEUED);
  t.regex(await send(BULK + 1), /^550 5\.7\.1 This message has reached 2 people today without an unsubscribe link/);
});

test('the sandbox: a recipient outside it is refused with 550 5.7.1; the simulator is reached', async (t) => {
  const team = await sendingTeam(p, dns, { sandbox: true });
  const a = `a@${team.domain}`;
  const refused = await submit(
    team.key,
    a,
    'stranger@inbox-chk.test',
    `From: ${a}\r\nTo: stranger@inbox-chk.test\r\nSubject: sandbox\r\n\r\nx\r\n`,
  );
  t.regex(refused, /^550 5\.7\.1 The us-east-1 region of this team is still in the sending sandbox/);
  t.deepEqual(await nothingStored(team), [0, []]);
  const sim = `delivered@${p.config.SIMULATOR_DOMAIN}`;
  t.regex(await submit(team.key, a, sim, `From: ${a}\r\nTo: ${sim}\r\nSubject: sandbox\r\n\r\nx\r\n`), QUEUED);
});

test('a key bound to one domain cannot send from another: 550 5.7.1', async (t) => {
  const team = await sendingTeam(p, dns);
  const second = await p.request('POST', '/domains', { key: team.key, body: { name: `second-${team.domain}` } });
  const bound = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'b', permission: 'sending_access', domain_id: second.body.id },
  });
  const a = `a@${team.domain}`;
  const refused = await submit(bound.body.token, a, 'ann@inbox-chk.test', mime(`From: ${a}\r\n`, 'bound'));
  t.regex(
    refused,
    new RegExp(
      `^550 5\\.7\\.1 This API key may only send from its own domain, not from ${team.domain.replace(/\./g, '\\.')}\\.$`,
    ),
  );
  t.deepEqual(await nothingStored(team), [0, []]);
  // The team's own key sends the same message.
  t.regex(await submit(team.key, a, 'ann@inbox-chk.test', mime(`From: ${a}\r\n`, 'bound')), QUEUED);
});

test('the daily quota: 451 4.7.1 once reached, nothing more stored', async (t) => {
  const team = await sendingTeam(p, dns);
  await p.db('teams').where({ id: team.id }).update({ daily_send_limit: 2 });
  const a = `a@${team.domain}`;
  for (const n of [1, 2])
    t.regex(await submit(team.key, a, 'ann@inbox-chk.test', mime(`From: ${a}\r\n`, `quota ${n}`)), QUEUED);
  t.regex(
    await submit(team.key, a, 'ann@inbox-chk.test', mime(`From: ${a}\r\n`, 'quota 3')),
    /^451 4\.7\.1 You have reached your daily sending quota of 2 emails\. It resets at 00:00 UTC\.$/,
  );
  t.is((await p.db('emails').where({ team_id: team.id })).length, 2);
});
