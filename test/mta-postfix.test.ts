// Interop with Postfix as the receiving MTA (a real peer, not ours): STARTTLS with Postfix's TLS stack, its
// PIPELINING and SIZE, its own refusal texts, and the message as relayed onward with its DKIM signature intact.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { startPostfix, type Postfix } from './helpers/postfix.ts';
import { insertEmail, recipientsOf } from './helpers/emails.ts';
import { processDelivery } from '../mta/delivery/job.ts';

const DOMAIN = 'pf-rcpt.test';
let w: MtaWorld;
let postfix: Postfix;
test.before(async () => {
  w = await startMtaWorld();
  // Postfix is the MX of pf-rcpt.test on the delivery port at 127.0.0.6 and relays what it accepts to the sink.
  postfix = await startPostfix({
    host: '127.0.0.6',
    port: w.sink.port,
    domain: DOMAIN,
    relayTo: { host: '127.0.0.1', port: w.sink.port },
    known: ['ok@pf-rcpt.test', 'ok2@pf-rcpt.test', 'later@pf-rcpt.test'],
    access: { 'later@pf-rcpt.test': '450 4.2.1 Mailbox temporarily unavailable' },
    messageSizeLimit: 200_000,
  });
  w.mx(DOMAIN, ['127.0.0.6']);
});
test.after.always(async () => {
  await postfix?.close();
  await w?.close();
});

async function send(to: string[], extra: { html?: string } = {}) {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, `sender-${Math.random().toString(36).slice(2, 8)}.test`);
  const id = await insertEmail(w.p.db, w.p.deps.blobs, { teamId: team.id, domain, to, ...extra });
  await processDelivery(w.deps, id);
  return { team, id };
}

test('Postfix takes the message over STARTTLS; it arrives beyond Postfix with its DKIM signature passing', async (t) => {
  const { id } = await send(['ok@pf-rcpt.test']);
  t.like((await recipientsOf(w.p.db, id)).get('ok@pf-rcpt.test'), { status: 'delivered', mx_host: `mx.${DOMAIN}` });
  const [attempt] = await w.p.db('delivery_attempts').where({ email_id: id });
  t.true(attempt.tls);
  t.regex(attempt.transcript, /S: 220 mx\.pf-rcpt\.test ESMTP Postfix/);
  t.regex(attempt.transcript, /S: 250 2\.0\.0 Ok: queued as \w+/);
  await w.sink.waitFor(() => w.sink.deliveredTo('ok@pf-rcpt.test').length > 0, 20_000);
  const [relayed] = w.sink.deliveredTo('ok@pf-rcpt.test');
  t.regex(relayed.raw.toString(), /Received: from .*\s+by mx\.pf-rcpt\.test \(Postfix\) with ESMTPS/);
  t.deepEqual(
    (await w.verifyDkim(relayed.raw)).map((d) => d.status),
    ['pass'],
  );
});

test("Postfix's own refusals: unknown user bounces (Permanent/NoEmail), 450 defers, in one transaction with a delivered one", async (t) => {
  const { team, id } = await send(['ok2@pf-rcpt.test', 'nobody@pf-rcpt.test', 'later@pf-rcpt.test']);
  const rs = await recipientsOf(w.p.db, id);
  t.is(rs.get('ok2@pf-rcpt.test')?.status, 'delivered');
  t.like(rs.get('nobody@pf-rcpt.test'), {
    status: 'bounced',
    enhanced_code: '5.1.1',
    bounce_type: 'Permanent',
    bounce_sub_type: 'NoEmail',
  });
  t.regex(rs.get('nobody@pf-rcpt.test')?.last_response ?? '', /User unknown in relay recipient table/);
  t.like(rs.get('later@pf-rcpt.test'), { status: 'deferred', enhanced_code: '4.2.1' });
  t.truthy(await w.p.db('suppressions').where({ team_id: team.id, email: 'nobody@pf-rcpt.test' }).first());
});

test("a message over Postfix's SIZE limit bounces as Transient/MessageTooLarge", async (t) => {
  const { id } = await send(['ok@pf-rcpt.test'], { html: `<p>${'x'.repeat(300_000)}</p>` });
  t.like((await recipientsOf(w.p.db, id)).get('ok@pf-rcpt.test'), {
    status: 'bounced',
    bounce_type: 'Transient',
    bounce_sub_type: 'MessageTooLarge',
  });
});
