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
  const { team, send } = await apiSender(w, 'routing-implicit-sender.test');
  w.dns.set('implicit-rcpt.test', 'A', ['127.0.0.1']);
  const id = await send({ to: 'ivy@implicit-rcpt.test', subject: 'Routing' });
  await processDelivery(w.deps, id);

  t.like((await recipientsOf(w.p.db, id)).get('ivy@implicit-rcpt.test'), {
    status: 'delivered',
    mx_host: 'implicit-rcpt.test',
  });
  t.is(w.sink.deliveredTo('ivy@implicit-rcpt.test').length, 1);
  const [attempt, ...more] = await attemptsOf(w, team.key, id);
  t.is(more.length, 0);
  t.like(attempt, { domain: 'implicit-rcpt.test', mx_host: 'implicit-rcpt.test', outcome: 'delivered' });
  t.regex(attempt.transcript!, /^\* (connecting|reusing the session) to implicit-rcpt\.test \[127\.0\.0\.1\]/m);
  t.truthy(
    w.dns.queries.find((q) => q.name === 'implicit-rcpt.test' && q.type === 'MX'),
    'the MX was asked first',
  );
});

test("with an MX, the domain's own address record is never used", async (t) => {
  const { team, send } = await apiSender(w, 'routing-explicit-sender.test');
  w.mx('explicit-rcpt.test');
  // Nothing listens here: a connection to it would show in the transcript.
  w.dns.set('explicit-rcpt.test', 'A', ['127.0.0.9']);
  const id = await send({ to: 'eve@explicit-rcpt.test', subject: 'Routing' });
  await processDelivery(w.deps, id);
  t.like((await recipientsOf(w.p.db, id)).get('eve@explicit-rcpt.test'), {
    status: 'delivered',
    mx_host: 'mx.explicit-rcpt.test',
  });
  const [attempt] = await attemptsOf(w, team.key, id);
  t.false(attempt.transcript!.includes('127.0.0.9'), attempt.transcript!);
  t.is(w.sink.deliveredTo('eve@explicit-rcpt.test').length, 1);
});
