// Opportunistic STARTTLS whose handshake fails (a receiver that offers STARTTLS, answers 220 to it, then breaks
// the handshake: garbage where the ServerHello belongs, or a hang-up): transmit.ts opens the session again in
// the clear and delivers, and the attempt's transcript (GET /emails/{id}/attempts) shows the failed handshake
// and the retry; for a domain with `tls: enforced` it does not: the recipient waits.
import test from 'ava';
import net from 'node:net';
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

/**
 * A receiver at `host`:`port` whose first session offers STARTTLS, answers 220 to it and then, once the client's
 * ClientHello arrives, breaks the handshake: `hangup` closes the connection, `garbage` sends bytes that are not a
 * TLS record where the ServerHello belongs. Every later connection is handed to `sinkPort` on 127.0.0.1 (the
 * world's sink).
 */
async function brokenTlsReceiver(host: string, port: number, sinkPort: number, mode: 'hangup' | 'garbage') {
  const seen = { connections: 0, starttls: 0, handshakeBytes: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (++seen.connections > 1) {
      const backend = net.connect(sinkPort, '127.0.0.1');
      sockets.add(backend);
      backend.on('error', () => socket.destroy());
      backend.on('close', () => sockets.delete(backend));
      socket.pipe(backend).pipe(socket);
      return;
    }
    let upgrading = false;
    let buffered = '';
    socket.write('220 broken-tls.test ESMTP\r\n');
    socket.on('data', (chunk: Buffer) => {
      if (upgrading) {
        // The client's ClientHello (a TLS record, content type 22).
        seen.handshakeBytes += chunk.length;
        if (mode === 'garbage') socket.end('this is not a TLS ServerHello\r\n');
        else socket.destroy();
        return;
      }
      buffered += chunk.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n')) !== -1) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const verb = line.split(' ')[0].toUpperCase();
        if (verb === 'EHLO') socket.write('250-broken-tls.test\r\n250-PIPELINING\r\n250-8BITMIME\r\n250 STARTTLS\r\n');
        else if (verb === 'STARTTLS') {
          seen.starttls++;
          upgrading = true;
          socket.write('220 2.0.0 Ready to start TLS\r\n');
        } else if (verb === 'QUIT') socket.end('221 2.0.0 Bye\r\n');
        else socket.write('502 5.5.2 Not in this test\r\n');
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

for (const [mode, ip] of [
  ['garbage', '127.0.0.6'],
  ['hangup', '127.0.0.7'],
] as const) {
  test(`a failed STARTTLS handshake (${mode}) is retried once in the clear: delivered, and the transcript shows both`, async (t) => {
    const receiver = await brokenTlsReceiver(ip, w.sink.port, w.sink.port, mode);
    t.teardown(receiver.close);
    const { team, send } = await apiSender(w, `routing-${mode}-sender.test`);
    w.dns.set(`${mode}-tls.test`, 'MX', [{ exchange: `mx.${mode}-tls.test`, priority: 10 }]);
    w.dns.set(`mx.${mode}-tls.test`, 'A', [ip]);
    const id = await send({ to: `tia@${mode}-tls.test`, subject: 'Routing' });
    await processDelivery(w.deps, id);
    const [attempt, ...more] = await attemptsOf(w, team.key, id);
    const transcript = attempt.transcript!;
    t.log(transcript);

    t.like((await recipientsOf(w.p.db, id)).get(`tia@${mode}-tls.test`), {
      status: 'delivered',
      mx_host: `mx.${mode}-tls.test`,
    });
    t.deepEqual(receiver.seen.connections, 2, 'the broken session, then one in the clear');
    t.is(receiver.seen.starttls, 1, 'STARTTLS asked for once');
    t.true(receiver.seen.handshakeBytes > 0, 'the client really began a handshake');
    const delivered = w.sink.deliveredTo(`tia@${mode}-tls.test`);
    t.is(delivered.length, 1);
    t.false(delivered[0].secure, 'the retry does not ask for STARTTLS again');

    t.is(more.length, 0, 'one attempt: the retry belongs to it');
    t.like(attempt, { domain: `${mode}-tls.test`, mx_host: `mx.${mode}-tls.test`, tls: false, outcome: 'delivered' });
    const lines = transcript.split('\n');
    const connecting = `* connecting to mx.${mode}-tls.test [${ip}]:${w.sink.port}`;
    const first = lines.indexOf(connecting);
    const starttls = lines.indexOf('C: STARTTLS');
    // How the handshake broke, whatever error code nodemailer gives it.
    const failed = lines.findIndex((l, i) => i > starttls && /^\* E[A-Z_]+: .*(TLS|SSL)/.test(l));
    const retry = lines.indexOf(`${connecting} without STARTTLS`);
    const mail = lines.findIndex((l) => l.startsWith('C: MAIL FROM:'));
    t.true(first >= 0 && starttls > first, 'the first session asked for STARTTLS');
    t.regex(lines[starttls + 1] ?? '', /^S: 220 2\.0\.0 Ready to start TLS/);
    t.true(failed > starttls, 'then the handshake failed');
    t.true(retry > failed, 'then a session without STARTTLS');
    t.true(mail > retry, 'and the transaction went over it');
    t.is(lines.filter((l) => l === 'C: STARTTLS').length, 1);
    t.regex(transcript, /^\* session in the clear \(no STARTTLS\)$/m);
    t.regex(attempt.response ?? '', /^250 /);
  });
}

test('for a domain whose TLS is enforced, a failed handshake is not retried in the clear: the recipient waits', async (t) => {
  const receiver = await brokenTlsReceiver('127.0.0.8', w.sink.port, w.sink.port, 'garbage');
  t.teardown(receiver.close);
  const { team, domain, send } = await apiSender(w, 'routing-enforced-sender.test');
  const patched = await w.p.request('PATCH', `/domains/${domain.id}`, { key: team.key, body: { tls: 'enforced' } });
  t.is(patched.status, 200);
  // The world marks its domains verified without their records; the update derived the status from them again.
  await w.p.db('domains').where({ id: domain.id }).update({ status: 'verified' });
  w.dns.set('enforced-tls.test', 'MX', [{ exchange: 'mx.enforced-tls.test', priority: 10 }]);
  w.dns.set('mx.enforced-tls.test', 'A', ['127.0.0.8']);
  const id = await send({ to: 'ted@enforced-tls.test' });
  await processDelivery(w.deps, id);

  t.is(receiver.seen.connections, 1, 'no second session in the clear');
  t.is(w.sink.deliveredTo('ted@enforced-tls.test').length, 0);
  const recipient = (await recipientsOf(w.p.db, id)).get('ted@enforced-tls.test')!;
  t.is(recipient.status, 'deferred');
  t.regex(recipient.last_response ?? '', /^421 4\.7\.4 ENOTLS: .*mx\.enforced-tls\.test failed the STARTTLS handshake/);
  const [attempt] = await attemptsOf(w, team.key, id);
  t.like(attempt, { outcome: 'deferred', tls: false });
  t.regex(attempt.transcript!, /C: STARTTLS/);
  t.notRegex(attempt.transcript!, /without STARTTLS/);
});
