// Where the MTA connects, against real peers on loopback: the implicit MX of RFC 5321 §5.1 (a domain with no MX
// but an address record is its own mail host; with an MX its own address is never used). Sent through the API,
// delivered by the mta's job, read back through GET /emails/{id}/attempts.
import test from 'ava';
import { apiSender, attemptsOf, startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { recipientsOf } from './helpers/emails.ts';
import { processDelivery } from '../mta/delivery/job.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

test('implicit MX (RFC 5321 §5.1): a domain with no MX but an A record gets the mail at that address', async (t) => {
  const { team, send } = await apiSender(w, 'routing-implicit-sender.com');
  w.dns.set('implicit-rcpt.net', 'A', ['127.0.0.1']);
  const id = await send({ to: 'ivy@implicit-rcpt.net', subject: 'Routing' });
  await processDelivery(w.deps, id);

  t.like((await recipientsOf(w.p.db, id)).get('ivy@implicit-rcpt.net'), {
    status: 'delivered',
    mx_host: 'implicit-rcpt.net',
  });
  t.is(w.sink.deliveredTo('ivy@implicit-rcpt.net').length, 1);
  const [attempt, ...more] = await attemptsOf(w, team.key, id);
  t.is(more.length, 0);
  t.like(attempt, { domain: 'implicit-rcpt.net', mx_host: 'implicit-rcpt.net', outcome: 'delivered' });
  t.regex(attempt.transcript!, /^\* (connecting|reusing the session) to implicit-rcpt\.net \[127\.0\.0\.1\]/m);
  t.truthy(
    w.dns.queries.find((q) => q.name === 'implicit-rcpt.net' && q.type === 'MX'),
    'the MX was asked first',
  );
});

test("with an MX, the domain's own address record is never used", async (t) => {
  const { team, send } = await apiSender(w, 'routing-explicit-sender.com');
  w.mx('explicit-rcpt.net');
  // Nothing listens here: a connection to it would show in the transcript.
  w.dns.set('explicit-rcpt.net', 'A', ['127.0.0.9']);
  const id = await send({ to: 'eve@explicit-rcpt.net', subject: 'Routing' });
  await processDelivery(w.deps, id);
  t.like((await recipientsOf(w.p.db, id)).get('eve@explicit-rcpt.net'), {
    status: 'delivered',
    mx_host: 'mx.explicit-rcpt.net',
  });
  const [attempt] = await attemptsOf(w, team.key, id);
  t.false(attempt.transcript!.includes('127.0.0.9'), attempt.transcript!);
  t.is(w.sink.deliveredTo('eve@explicit-rcpt.net').length, 1);
});
