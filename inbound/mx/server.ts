// The MX listener (RFC 5321 as a final destination): STARTTLS, SIZE, 8BITMIME, SMTPUTF8, PIPELINING; no AUTH.
// RCPT TO is accepted only for addresses we serve (recipients.ts), so refusals happen at RCPT with 550 5.1.1,
// never after DATA. DATA is stored durably (store.ts) before the 250; a storage failure answers 451 4.3.0 so
// the sender retries. Receive jobs are enqueued after the commit, in batches (shared/batcher.ts); the sweep covers a
// failed enqueue.
import type { SMTPServer, SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import type { Knex } from 'knex';
import type { Config } from '../../shared/config.ts';
import type { Logger } from '../../shared/logger.ts';
import type { BlobStore } from '../../shared/blobs.ts';
import { MxSmtpServer } from '../../shared/lib-internals/smtp-server-greeting.ts';
import { corkReplies } from '../../shared/lib-internals/smtp-server-replies.ts';
import { findRecipient, type Recipient } from './recipients.ts';
import { storeReceivedMessage } from './store.ts';
import { batcher } from '../../shared/batcher.ts';
import { readMessage } from '../../shared/smtp/data.ts';
import { SmtpReply, temporaryFailure } from '../../shared/smtp/reply.ts';
import { mxResult, type MxResult } from '../../shared/metrics/inbound.ts';
import { countSessions, type SessionMetrics } from '../../shared/metrics/sessions.ts';
import { RecipientCache } from './recipient-cache.ts';

/** What counting answers needs of a counter. */
interface MxAnswers {
  inc(labels: { result: MxResult }): void;
}

export interface MxDeps {
  config: Pick<
    Config,
    'PLATFORM_INBOUND_HOST' | 'INBOUND_MAX_MESSAGE_BYTES' | 'INBOUND_GREETING_DELAY_MS' | 'INBOUND_RCPT_CACHE_MS'
  >;
  db: Knex;
  blobs: BlobStore;
  log: Logger;
  secrets: Buffer;
  tls: { key: string; cert: string };
  /**
   * Hands stored messages to the receive job (not awaited before the 250); a failure is logged, the sweep re-enqueues.
   */
  enqueueReceive: (messageIds: string[]) => Promise<void>;
  /**
   * How long the first message after a quiet spell waits for others to share its addBulk (the MX thread: 20 ms, a
   * Redis pipeline and its socket write per ~20 messages under load instead of one or two); 0 hands it on at once.
   */
  enqueueDelayMs?: number;
  /**
   * Sessions, recipients and messages by answer (shared/metrics/inbound.ts): the registry's metrics, or a thread's
   * calls relayed to them (thread.ts).
   */
  metrics?: {
    mxSessions: SessionMetrics<never>;
    mxRecipients: MxAnswers;
    mxMessages: MxAnswers;
  };
}

/** RFC 5321 §4.5.3.1.8: at least 100 recipients must be accepted per message. */
export const MAX_RECIPIENTS = 100;

// Recipients resolved at RCPT, per envelope: smtp-server makes a new envelope object on RSET and after DATA.
const resolved = new WeakMap<SMTPServerSession['envelope'], Map<string, Recipient>>();

export function createMxServer(deps: MxDeps): SMTPServer {
  const limit = deps.config.INBOUND_MAX_MESSAGE_BYTES;
  const served = new RecipientCache(deps.config.INBOUND_RCPT_CACHE_MS);
  // A shutdown with ids waiting leaves them to the sweep, as a failed enqueue does.
  const enqueue = batcher(deps.enqueueReceive, {
    delayMs: deps.enqueueDelayMs ?? 0,
    onError: (err, messageIds) => deps.log.warn({ err, messageIds }, 'mx.enqueue_failed'),
  });
  const answered = (counter: 'mxRecipients' | 'mxMessages', err?: SmtpReply) =>
    deps.metrics?.[counter].inc({ result: mxResult(err?.responseCode) });
  const server: SMTPServer = new MxSmtpServer(
    {
      key: deps.tls.key,
      cert: deps.tls.cert,
      // The MX's own name, the one receiving domains' MX records give (and its Authentication-Results' authserv-id);
      // MTA_HOSTNAME is the outgoing mta's.
      name: deps.config.PLATFORM_INBOUND_HOST,
      banner: 'Postwerk MX',
      size: limit,
      // An MX takes no AUTH: no AUTH in EHLO, no command, and nobody needs to log in.
      authOptional: true,
      authMethods: [],
      disabledCommands: ['AUTH'],
      // We neither relay nor send delivery notifications, so DSN and REQUIRETLS are not offered.
      hideDSN: true,
      hideREQUIRETLS: true,
      maxRecipients: MAX_RECIPIENTS,
      logger: false,
      // No PTR lookup before the greeting (upstream does one per connection, up to 1.5 s): nothing here uses the
      // client's reverse name, and the 220 must not wait on the sender's DNS. Postfix's peer in bench/ runs with
      // smtpd_peername_lookup = no likewise. An iprev verdict, when it comes, belongs to the receive job.
      disableReverseLookup: true,
      // On shutdown, sessions get this long to finish; what we did not 250 the sender retries.
      closeTimeout: 10_000,
      onRcptTo(address: SMTPServerAddress, session, callback) {
        const reply = (err?: SmtpReply) => {
          answered('mxRecipients', err);
          callback(err);
        };
        findRecipient(deps.db, deps.secrets, address.address, served)
          .then((recipient) => {
            if (!recipient)
              return reply(
                new SmtpReply(
                  550,
                  `5.1.1 <${address.address.replace(/[\r\n<>]/g, '')}>: Recipient address rejected: no such mailbox here`,
                ),
              );
            const map = resolved.get(session.envelope) ?? new Map<string, Recipient>();
            map.set(address.address.toLowerCase(), recipient);
            resolved.set(session.envelope, map);
            reply();
          })
          .catch((err) => {
            deps.log.error({ err, sessionId: session.id }, 'mx.rcpt_lookup_failed');
            reply(temporaryFailure('looking up the recipient'));
          });
      },
      onData(stream, session, callback) {
        const map = resolved.get(session.envelope);
        readMessage(stream, limit)
          .then(async (raw) => {
            const recipients = session.envelope.rcptTo
              .map((r) => ({ address: r.address, recipient: map?.get(r.address.toLowerCase()) }))
              .filter((r): r is { address: string; recipient: Recipient } => r.recipient !== undefined);
            if (recipients.length === 0) throw temporaryFailure();
            let ids: string[];
            try {
              ids = await storeReceivedMessage(deps.db, deps.blobs, {
                raw,
                envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                recipients,
                remoteIp: session.remoteAddress ?? '',
                helo: session.hostNameAppearsAs ?? '',
                tls: Boolean(session.secure),
                byHost: deps.config.PLATFORM_INBOUND_HOST,
              });
            } catch (err) {
              deps.log.error({ err, sessionId: session.id }, 'mx.store_failed');
              throw temporaryFailure();
            }
            deps.log.info({ sessionId: session.id, messageIds: ids, size: raw.length }, 'mx.stored');
            void enqueue(ids);
            return ids;
          })
          .then((ids) => {
            answered('mxMessages');
            callback(null, `2.0.0 OK: stored as ${ids[0]}`);
          })
          .catch((err) => {
            if (!(err instanceof SmtpReply)) deps.log.error({ err, sessionId: session.id }, 'mx.data_failed');
            const reply = err instanceof SmtpReply ? err : temporaryFailure();
            answered('mxMessages', reply);
            callback(reply);
          });
      },
    },
    deps.config.INBOUND_GREETING_DELAY_MS,
  );
  // A pipelining sender's RCPT and DATA replies leave in one write (shared/lib-internals/smtp-server-replies.ts).
  corkReplies(server);
  if (deps.metrics) countSessions(server.server, deps.metrics.mxSessions);
  server.on('error', (err) => deps.log.warn({ err: err.message }, 'mx.error'));
  return server;
}
