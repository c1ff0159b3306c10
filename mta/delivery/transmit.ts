// One SMTP transaction for one destination domain: MAIL FROM once, RCPT TO per recipient, DATA for those
// accepted. MX hosts are tried in order (RFC 5321 §5.1) and each host's addresses in turn, while the session
// fails before the transaction starts (refused, timed out, a 4xx/5xx greeting, a failed EHLO); once MAIL FROM
// is answered, that host's answers are final for this attempt. Each recipient gets its own answer: its RCPT
// reply when refused, else the reply to MAIL FROM, DATA or the final dot, else how the session broke. A domain
// with `tls: enforced` uses only encrypted sessions (tlsRequired below).
import type { DnsResolver, MxRecord } from '../../shared/dns/resolver.ts';
import { parseReply, type Answer, type Failure } from '../../shared/bounces/classify.ts';
import { hostAddresses } from './route.ts';
import type { SessionPool } from './pool.ts';
import type { SendResult, SmtpError, Target } from './session.ts';
import type { Throttle } from './throttle.ts';

export interface TransmitDeps {
  dns: DnsResolver;
  pool: SessionPool;
  throttle: Throttle;
  /** SMTP_DELIVERY_PORT. */
  port: number;
}

export interface Transmission {
  /** The MX host that answered (or the last one tried). */
  mxHost: string | null;
  tls: boolean;
  transcript: string;
  answers: Map<string, Answer>;
}

type SessionOutcome = { done: true; tls: boolean; answers: Map<string, Answer> } | { done: false; answer: Answer };

function answerOf(err: SmtpError): Answer {
  const reply = err.response ? parseReply(err.response) : null;
  if (reply) return reply;
  // The server announced a SIZE limit and nodemailer refused to send past it (RFC 1870 §6.1).
  if (err.code === 'EMESSAGE' && /larger than allowed/.test(err.message)) {
    return parseReply(`552 5.3.4 ${err.message} (the server's announced SIZE)`)!;
  }
  return { error: err.code ?? 'EUNKNOWN', message: err.message };
}

function answersOf(sent: SendResult, recipients: string[]): Map<string, Answer> {
  const refused = new Map((sent.envelope?.rejectedErrors ?? []).map((e) => [(e.recipient ?? '').toLowerCase(), e]));
  const final: Answer = sent.ok
    ? (parseReply(sent.response) ?? { error: 'EPROTOCOL', message: sent.response })
    : answerOf(sent.error);
  return new Map(
    recipients.map((r) => {
      const own = refused.get(r.toLowerCase());
      return [r, own ? answerOf(own) : final];
    }),
  );
}

/**
 * A domain with `tls: enforced` sends nothing in the clear (as Postfix's smtp_tls_security_level = encrypt: the
 * session is encrypted, its certificate is not verified): a host that does not offer STARTTLS, or whose handshake
 * fails, is passed over like one that refused the connection, and the recipient is deferred if no host will do.
 */
function tlsRequired(host: string, why: string): Failure {
  return {
    error: 'ENOTLS',
    enhanced: '4.7.4',
    message: `the sending domain requires TLS (tls: enforced) and ${host} ${why}; not sent in the clear`,
  };
}

async function trySession(
  deps: TransmitDeps,
  target: Target,
  envelope: { from: string; requireTls: boolean },
  recipients: string[],
  message: Buffer,
  lines: string[],
): Promise<SessionOutcome> {
  let ignoreTLS = false;
  for (let round = 0; round < 3; round++) {
    const acquired = await deps.pool.acquire(target, { ignoreTLS });
    if (!acquired.ok) {
      lines.push(...acquired.transcript, `* ${acquired.error.code ?? 'error'}: ${acquired.error.message}`);
      if (acquired.error.code === 'ETLS' && envelope.requireTls)
        return { done: false, answer: tlsRequired(target.host, 'failed the STARTTLS handshake') };
      if (acquired.error.code === 'ETLS' && !ignoreTLS) {
        ignoreTLS = true;
        continue;
      }
      return { done: false, answer: answerOf(acquired.error) };
    }
    const session = acquired.session;
    if (envelope.requireTls && !session.tls) {
      const answer = tlsRequired(target.host, 'did not offer STARTTLS');
      lines.push(...session.transcript, `* ${answer.message}`);
      // The session stays good for other domains' mail.
      deps.pool.release(session, true);
      return { done: false, answer };
    }
    const sent = await session.send(envelope.from, recipients, message);
    lines.push(...session.transcript);
    if (!sent.ok) lines.push(`* ${sent.error.code ?? 'error'}: ${sent.error.message}`);
    // A pooled session the peer had dropped fails before any reply: nothing was sent, so a new session may try.
    if (!sent.ok && session.reused && !sent.error.responseCode && !sent.envelope?.accepted.length) {
      deps.pool.release(session, false);
      lines.push('* the reused session had gone away; opening a new one');
      continue;
    }
    const reusable =
      sent.ok || (!!sent.error.responseCode && sent.error.responseCode !== 421 && (await session.reset()));
    deps.pool.release(session, reusable);
    return { done: true, tls: session.tls, answers: answersOf(sent, recipients) };
  }
  return { done: false, answer: { error: 'ECONNECTION', message: 'no usable session' } };
}

export async function transmit(
  deps: TransmitDeps,
  hosts: MxRecord[],
  from: string,
  recipients: string[],
  message: Buffer,
  options: { requireTls?: boolean } = {},
): Promise<Transmission> {
  const lines: string[] = [];
  let last: Answer = { error: 'ENOHOST', message: 'no MX host could be reached' };
  let lastHost: string | null = null;
  for (const mx of hosts) {
    const found = await hostAddresses(deps.dns, mx.exchange);
    if (found.status !== 'ok') {
      const why = found.status === 'none' ? 'has no address record' : `address lookup failed (${found.error})`;
      lines.push(`* MX ${mx.exchange} ${why}`);
      last = { error: found.status === 'none' ? 'ENOADDRESS' : 'EDNS', message: `MX ${mx.exchange} ${why}` };
      continue;
    }
    for (const ip of found.addresses) {
      lastHost = mx.exchange;
      const target = { host: mx.exchange, ip, port: deps.port };
      const outcome = await deps.throttle.run(mx.exchange, () =>
        trySession(deps, target, { from, requireTls: options.requireTls ?? false }, recipients, message, lines),
      );
      if (outcome.done)
        return { mxHost: mx.exchange, tls: outcome.tls, transcript: lines.join('\n'), answers: outcome.answers };
      last = outcome.answer;
    }
  }
  return {
    mxHost: lastHost,
    tls: false,
    transcript: lines.join('\n'),
    answers: new Map(recipients.map((r) => [r, last])),
  };
}
