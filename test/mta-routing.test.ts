// Where the MTA connects, against real peers on loopback: the implicit MX of RFC 5321 §5.1 (a domain with no MX
// but an address record is its own mail host; with an MX its own address is never used). Sent through the API,
// delivered by the mta's job, read back through GET /emails/{id}/attempts.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { recipientsOf } from './helpers/emails.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { liftSandbox } from '../shared/teams/teams.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

/** A team out of the sandbox with a verified sending domain; `send` posts through the API. */
async function sender(name: string) {
  const team = await w.p.createTeam();
  await liftSandbox(w.p.db, team.id, 'us-east-1');
  const domain = await w.sendingDomain(team, name);
  const send = async (to: string) => {
    const res = await w.p.request('POST', '/emails', { key: team.key, body: { from: `Shop <shop@${domain.name}>`, to, subject: 'Routing', text: 'Hello' } });
    if (res.status !== 200) throw new Error(`POST /emails answered ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  return { team, domain, send };
}

interface Attempt {
  domain: string;
  mx_host: string | null;
  tls: boolean;
  outcome: string;
  response: string | null;
  transcript: string | null;
}

async function attemptsOf(key: string, id: string): Promise<Attempt[]> {
  const res = await w.p.request('GET', `/emails/${id}/attempts`, { key });
  if (res.status !== 200) throw new Error(`GET attempts answered ${res.status} ${res.text}`);
  return res.body.data;
}

test('implicit MX (RFC 5321 §5.1): a domain with no MX but an A record gets the mail at that address', async (t) => {
  const { team, send } = await sender('routing-implicit-sender.com');
  w.dns.set('implicit-rcpt.net', 'A', ['127.0.0.1']);
  const id = await send('ivy@implicit-rcpt.net');
  await processDelivery(w.deps, id);

  t.like((await recipientsOf(w.p.db, id)).get('ivy@implicit-rcpt.net'), { status: 'delivered', mx_host: 'implicit-rcpt.net' });
  t.is(w.sink.deliveredTo('ivy@implicit-rcpt.net').length, 1);
  const [attempt, ...more] = await attemptsOf(team.key, id);
  t.is(more.length, 0);
  t.like(attempt, { domain: 'implicit-rcpt.net', mx_host: 'implicit-rcpt.net', outcome: 'delivered' });
  t.regex(attempt.transcript!, /^\* (connecting|reusing the session) to implicit-rcpt\.net \[127\.0\.0\.1\]/m);
  t.truthy(w.dns.queries.find((q) => q.name === 'implicit-rcpt.net' && q.type === 'MX'), 'the MX was asked first');
});

test('with an MX, the domain\'s own address record is never used', async (t) => {
  const { team, send } = await sender('routing-explicit-sender.com');
  w.mx('explicit-rcpt.net');
  // Nothing listens here: a connection to it would show in the transcript.
  w.dns.set('explicit-rcpt.net', 'A', ['127.0.0.9']);
  const id = await send('eve@explicit-rcpt.net');
  await processDelivery(w.deps, id);
  t.like((await recipientsOf(w.p.db, id)).get('eve@explicit-rcpt.net'), { status: 'delivered', mx_host: 'mx.explicit-rcpt.net' });
  const [attempt] = await attemptsOf(team.key, id);
  t.false(attempt.transcript!.includes('127.0.0.9'), attempt.transcript!);
  t.is(w.sink.deliveredTo('eve@explicit-rcpt.net').length, 1);
});
