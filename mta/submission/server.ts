// SMTP submission (RFC 6409): STARTTLS on SMTP_SUBMISSION_PORT, implicit TLS on SMTP_SUBMISSION_TLS_PORT.
// AUTH PLAIN/LOGIN with username `apikey` and an API key as password (credentials.ts); the key is looked up again
// at every MAIL FROM; the message then takes the same accept path as POST /emails (accept.ts), and 250 means
// committed. Every reply carries an enhanced status code (RFC 2034, ENHANCEDSTATUSCODES announced).
import { SMTPServer, type SMTPServerAuthentication } from 'smtp-server';
import { configSchema } from '../../shared/config.ts';
import { MAX_RECIPIENTS } from '../../shared/emails/prepare.ts';
import { countIn, rateLimitError, windowOf } from '../../shared/rate-limit.ts';
import { accept, type SubmissionDeps } from './accept.ts';
import { readMessage } from '../../shared/smtp/data.ts';
import { SmtpReply } from '../../shared/smtp/reply.ts';
import { authenticateSubmission, currentSender, type Authed } from './credentials.ts';
import { toSmtpReply } from './replies.ts';
import { correctReplies, corkReplies } from '../../shared/lib-internals/smtp-server-replies.ts';
import { countSessions } from '../../shared/metrics/sessions.ts';

export type { SubmissionDeps } from './accept.ts';

/** Largest message accepted by default (SMTP_SUBMISSION_MAX_BYTES: 40 MB of content, plus MIME's base64 overhead). */
export const MAX_SUBMISSION_BYTES = configSchema.shape.SMTP_SUBMISSION_MAX_BYTES.parse(undefined);

export function createSubmissionServer(
  deps: SubmissionDeps,
  options: { implicitTls: boolean; maxBytes?: number },
): SMTPServer {
  const maxBytes = options.maxBytes ?? MAX_SUBMISSION_BYTES;
  const server: SMTPServer = new SMTPServer({
    secure: options.implicitTls,
    key: deps.tls.key,
    cert: deps.tls.cert,
    name: deps.config.MTA_HOSTNAME,
    banner: 'Postwerk submission',
    size: maxBytes,
    authMethods: ['PLAIN', 'LOGIN'],
    // Credentials only travel encrypted (RFC 8314 §3); AUTH before STARTTLS is refused.
    allowInsecureAuth: false,
    // smtp-server hides the extension by default; announced, its own replies carry codes too (500 5.5.2, ...).
    hideENHANCEDSTATUSCODES: false,
    disabledCommands: [],
    logger: false,
    // On shutdown, sessions get this long to finish before they are cut (the client retries what we did not 250).
    closeTimeout: 10_000,
    async onAuth(auth: SMTPServerAuthentication, session, callback) {
      try {
        callback(null, { user: await authenticateSubmission(deps.db, auth.username ?? '', auth.password ?? '') });
      } catch (err) {
        if (!(err instanceof SmtpReply)) deps.log.error({ err, sessionId: session.id }, 'submission.auth_failed');
        callback(err instanceof SmtpReply ? err : new SmtpReply(454, '4.7.0 Temporary authentication failure'));
      }
    },
    // Per message, at MAIL FROM: the key and its team as they are now (a revoked key or a suspended team stops
    // here, and the message's quotas read the fresh team row), then the team's rate limit, one count per message
    // as the api counts one per request: a message over the limit is refused before its body crosses the wire,
    // and the 451 asks the client to retry the transaction (RFC 5321 §4.2.1, 4yz at MAIL). A Redis outage lets
    // mail through, as on the api. The two lookups go out together (a key never changes team, so the count is
    // made under the session's team id while the row is read): one round trip's wait per message, not two in a
    // row; a MAIL FROM refused for its key is then counted in the team's window too.
    async onMailFrom(_address, session, callback) {
      const now = Date.now();
      const counting = countIn(deps.redis, deps.config, (session.user as Authed).team.id, now).then(
        (count) => ({ count }),
        (err: unknown) => ({ err }),
      );
      let authed: Authed;
      try {
        authed = await currentSender(deps.db, (session.user as Authed).key.id);
        session.user = authed;
      } catch (err) {
        if (!(err instanceof SmtpReply)) deps.log.error({ err, sessionId: session.id }, 'submission.failed');
        return callback(toSmtpReply(err));
      }
      const counted = await counting;
      if ('err' in counted) deps.log.warn({ err: counted.err, sessionId: session.id }, 'ratelimit.unavailable');
      else {
        const window = windowOf(deps.config, authed.team, counted.count, now);
        if (window.exceeded) return callback(toSmtpReply(rateLimitError(window)));
      }
      callback();
    },
    // RFC 5321 §4.5.3.1.10: past the limit a recipient gets 452 and the client sends it in another transaction;
    // the message goes to those accepted. A repeated address replaces its entry, so it never counts twice.
    onRcptTo(address, session, callback) {
      const rcpt = session.envelope.rcptTo;
      const again = rcpt.some((r) => r.address.toLowerCase() === address.address.toLowerCase());
      if (rcpt.length >= MAX_RECIPIENTS && !again)
        return callback(new SmtpReply(452, `4.5.3 At most ${MAX_RECIPIENTS} recipients per message`));
      callback();
    },
    onData(stream, session, callback) {
      const authed = session.user as Authed;
      readMessage(stream, maxBytes)
        .then((raw) => accept(deps, authed, session, raw))
        .then((id) => callback(null, `2.0.0 OK: queued as ${id}`))
        .catch((err) => {
          const reply = toSmtpReply(err);
          if (reply.responseCode >= 451 && reply.responseCode < 500 && !(err instanceof SmtpReply))
            deps.log.error({ err, sessionId: session.id }, 'submission.failed');
          callback(reply);
        });
    },
  });
  correctReplies(server);
  corkReplies(server);
  if (deps.metrics?.submissionSessions)
    countSessions(server.server, deps.metrics.submissionSessions, {
      listener: options.implicitTls ? 'tls' : 'starttls',
    });
  server.on('error', (err) => deps.log.warn({ err: err.message }, 'submission.error'));
  return server;
}
