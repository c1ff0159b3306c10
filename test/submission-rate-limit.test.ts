// The api's per-team rate limit applies to SMTP submission too: one count per message, taken at MAIL FROM, in
// the same Redis window as the api's requests; over the limit the transaction gets 451 4.7.1 (retry later) and
// nothing is stored.
import test, { type ExecutionContext } from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { mailDomain, sendingTeam, type SendingTeam } from './helpers/sending.ts';
import { rawSmtp, type RawSmtp } from './helpers/smtp-client.ts';
import { startOfSecond } from './helpers/http.ts';
import { startSubmission, type Submission } from './helpers/submission.ts';

let p: Platform;
let dns: DnsServer;
let server: Submission;
let port: number;

test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address });
  mailDomain(dns, 'inbox-rl.test');
  server = await startSubmission(p.deps, { implicitTls: true });
  port = server.port;
});
test.after.always(async () => {
  await server?.close();
  await p?.close();
  await dns?.close();
});

async function teamWithLimit(rps: number): Promise<SendingTeam> {
  const team = await sendingTeam(p, dns);
  await p.db('teams').where({ id: team.id }).update({ rate_limit_rps: rps });
  return team;
}

async function session(team: SendingTeam): Promise<RawSmtp> {
  const s = await rawSmtp(port);
  await s.send('EHLO client.test');
  const auth = await s.send(`AUTH PLAIN ${Buffer.from(`\0apikey\0${team.key}`).toString('base64')}`);
  if (!auth.startsWith('235')) throw new Error(`AUTH: ${auth}`);
  return s;
}

/** One message through the open session: the replies to MAIL FROM and, when it was accepted, to the message. */
async function message(s: RawSmtp, team: SendingTeam, subject: string): Promise<string[]> {
  const mail = await s.send(`MAIL FROM:<a@${team.domain}>`);
  if (!mail.startsWith('250')) return [mail];
  await s.send('RCPT TO:<ann@inbox-rl.test>');
  await s.send('DATA');
  return [
    mail,
    await s.send(`From: a@${team.domain}\r\nTo: ann@inbox-rl.test\r\nSubject: ${subject}\r\n\r\nhello\r\n.`),
  ];
}

/** Runs `burst` inside one wall-clock second (the window); a burst that slipped past the boundary runs again. */
async function withinOneSecond<T>(t: ExecutionContext, burst: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    await startOfSecond();
    const start = Date.now();
    const result = await burst();
    if (Math.floor(Date.now() / 1000) === Math.floor(start / 1000)) return result;
    t.log(`burst crossed a second boundary (attempt ${attempt}); retrying`);
    if (attempt === 3) throw new Error('could not fit the burst in one second three times');
  }
}

const stored = async (team: SendingTeam, subject: string) =>
  Number((await p.db('emails').where({ team_id: team.id, subject }).count({ n: '*' }))[0].n);

test.serial(
  'over the per-second limit a message is refused at MAIL FROM with 451 4.7.1, nothing stored; the next second it goes',
  async (t) => {
    const team = await teamWithLimit(2);
    const s = await session(team);
    let tag = '';
    const replies = await withinOneSecond(t, async () => {
      tag = Math.random().toString(36).slice(2);
      const out: string[][] = [];
      for (let i = 0; i < 3; i++) out.push(await message(s, team, `burst ${i} ${tag}`));
      return out;
    });
    t.regex(replies[0][1], /^250 2\.0\.0 OK: queued as /);
    t.regex(replies[1][1], /^250 2\.0\.0 OK: queued as /);
    t.is(replies[2].length, 1, 'refused before RCPT and DATA');
    t.regex(
      replies[2][0],
      /^451 4\.7\.1 Too many requests\. You can make 2 requests per second; retry after 1 second\(s\)\./,
    );
    t.is(await stored(team, `burst 2 ${tag}`), 0);
    // The session stays usable: the client retries the transaction once the window has passed.
    await startOfSecond();
    const retried = await message(s, team, `burst 2 ${tag}`);
    t.regex(retried[1], /^250 2\.0\.0 OK: queued as /);
    t.is(await stored(team, `burst 2 ${tag}`), 1);
    s.close();
  },
);

test.serial('the api and SMTP submission share one window per team', async (t) => {
  const team = await teamWithLimit(3);
  const s = await session(team);
  let tag = '';
  const [api, smtp] = await withinOneSecond(t, async () => {
    tag = Math.random().toString(36).slice(2);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await p.request('GET', '/domains', { key: team.key })).status);
    return [answers, await message(s, team, `after the api ${tag}`)] as const;
  });
  t.deepEqual(api, [200, 200, 200]);
  t.regex(smtp[0], /^451 4\.7\.1 /);
  t.is(await stored(team, `after the api ${tag}`), 0);
  // And the other way round: SMTP messages use up the api's budget.
  const after = await withinOneSecond(t, async () => {
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push((await message(s, team, `smtp ${i}`))[1]);
    return { sent, api: await p.request('GET', '/domains', { key: team.key }) };
  });
  for (const r of after.sent) t.regex(r, /^250 /);
  t.is(after.api.status, 429);
  t.is(after.api.body.name, 'rate_limit_exceeded');
  s.close();
});
