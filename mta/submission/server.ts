// SMTP submission (RFC 6409): STARTTLS on SMTP_SUBMISSION_PORT, implicit TLS on SMTP_SUBMISSION_TLS_PORT.
// AUTH PLAIN/LOGIN with username `apikey` and an API key as password; the message then takes the same
// accept path as POST /emails (same checks, quotas, idempotency), and 250 means committed.
import { createHash } from 'node:crypto';
import { SMTPServer, type SMTPServerAuthentication, type SMTPServerSession } from 'smtp-server';
import type { Knex } from 'knex';
import type { Config } from '../../shared/config.ts';
import type { Logger } from '../../shared/logger.ts';
import type { BlobStore } from '../../shared/blobs.ts';
import type { DnsResolver } from '../../shared/dns/resolver.ts';
import type { EnqueueDelivery } from '../../shared/emails/enqueue.ts';
import { authenticate, type ApiKeyRow } from '../../shared/api-keys/keys.ts';
import type { TeamRow } from '../../shared/teams/teams.ts';
import { prepareEmail, MAX_RECIPIENTS } from '../../shared/emails/prepare.ts';
import { persistEmails } from '../../shared/emails/persist.ts';
import * as idempotency from '../../shared/idempotency/store.ts';
import type { Redis } from '../../shared/redis.ts';
import { countRequest, rateLimitError } from '../../shared/rate-limit.ts';
import { readSubmission } from './message.ts';
import { SmtpReply, toSmtpReply } from './replies.ts';

export interface SubmissionDeps {
  config: Config;
  db: Knex;
  blobs: BlobStore;
  dns: DnsResolver;
  log: Logger;
  enqueueDelivery: EnqueueDelivery;
  /** The rate limit's window, shared with the api. */
  redis: Redis;
  tls: { key: string; cert: string };
}

/** Largest message accepted (40 MB of content, plus MIME's base64 overhead). */
export const MAX_SUBMISSION_BYTES = 56 * 1024 * 1024;
const USERNAMES = new Set(['apikey', 'resend']);

type Authed = { key: ApiKeyRow; team: TeamRow };

async function readStream(stream: NodeJS.ReadableStream & { sizeExceeded?: boolean }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  if (stream.sizeExceeded) throw new SmtpReply(552, `5.3.4 The message is larger than ${MAX_SUBMISSION_BYTES} bytes`);
  return Buffer.concat(chunks);
}

async function accept(deps: SubmissionDeps, authed: Authed, session: SMTPServerSession, raw: Buffer): Promise<string> {
  const envelope = {
    from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
    to: session.envelope.rcptTo.map((r) => r.address),
  };
  const submitted = await readSubmission(raw, envelope);
  const now = new Date();
  const sender = { team: authed.team, key: authed.key, source: 'smtp' as const };
  let token: string | null = null;
  if (submitted.idempotencyKey !== null) {
    idempotency.validateKey(submitted.idempotencyKey);
    const claim = await idempotency.claim(deps.db, authed.team.id, submitted.idempotencyKey, createHash('sha256').update(submitted.raw).digest('hex'));
    if (claim.kind === 'replay') return (claim.body as { id: string }).id;
    token = claim.token;
  }
  try {
    const prepared = await prepareEmail(deps.db, deps, sender, submitted.input, now);
    prepared.raw = { bytes: submitted.raw, messageId: submitted.messageId ? `<${submitted.messageId.replace(/^<|>$/g, '')}>` : null };
    // One autocommitted statement, as the API's send: the Idempotency-Key answer (when given) is stored by it.
    const answer = token ? { key: submitted.idempotencyKey!, token, status: 200, answer: (ids: string[]) => ({ id: ids[0] }) } : undefined;
    const [row] = await persistEmails(deps.db, deps, sender, [prepared], now, undefined, answer);
    if (row.status === 'queued') await deps.enqueueDelivery([row.id]);
    return row.id;
  } catch (err) {
    if (token) await idempotency.release(deps.db, authed.team.id, submitted.idempotencyKey!, token);
    throw err;
  }
}

export function createSubmissionServer(deps: SubmissionDeps, options: { implicitTls: boolean }): SMTPServer {
  const server: SMTPServer = new SMTPServer({
    secure: options.implicitTls,
    key: deps.tls.key,
    cert: deps.tls.cert,
    name: deps.config.MTA_HOSTNAME,
    banner: 'Postwerk submission',
    size: MAX_SUBMISSION_BYTES,
    authMethods: ['PLAIN', 'LOGIN'],
    // Credentials only travel encrypted (RFC 8314 §3); AUTH before STARTTLS is refused.
    allowInsecureAuth: false,
    disabledCommands: [],
    logger: false,
    // On shutdown, sessions get this long to finish before they are cut (the client retries what we did not 250).
    closeTimeout: 10_000,
    async onAuth(auth: SMTPServerAuthentication, _session, callback) {
      try {
        if (!USERNAMES.has((auth.username ?? '').toLowerCase())) return callback(new SmtpReply(535, '5.7.8 Use the username `apikey` and an API key as the password'));
        const result = await authenticate(deps.db, auth.password ?? '');
        if (!result.ok) return callback(new SmtpReply(535, result.error === 'suspended_api_key' ? '5.7.8 This API key belongs to a suspended team' : '5.7.8 Authentication credentials invalid'));
        if (result.key.permission === 'store_access') return callback(new SmtpReply(535, '5.7.8 This API key cannot send email'));
        callback(null, { user: { key: result.key, team: result.team } satisfies Authed });
      } catch (err) {
        deps.log.error({ err }, 'submission.auth_failed');
        callback(new SmtpReply(454, '4.7.0 Temporary authentication failure'));
      }
    },
    // The team's rate limit, one count per message as the api counts one per request, taken at MAIL FROM: a
    // message over the limit is refused before its body crosses the wire, and the 451 asks the client to retry
    // the transaction (RFC 5321 §4.2.1, 4yz at MAIL). A Redis outage lets mail through, as on the api.
    async onMailFrom(_address, session, callback) {
      const authed = session.user as unknown as Authed;
      try {
        const window = await countRequest(deps.redis, deps.config, authed.team);
        if (window.exceeded) return callback(toSmtpReply(rateLimitError(window)));
      } catch (err) {
        deps.log.warn({ err, sessionId: session.id }, 'ratelimit.unavailable');
      }
      callback();
    },
    onRcptTo(_address, session, callback) {
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(new SmtpReply(452, `4.5.3 At most ${MAX_RECIPIENTS} recipients per message`));
      callback();
    },
    onData(stream, session, callback) {
      const authed = session.user as unknown as Authed;
      readStream(stream)
        .then((raw) => accept(deps, authed, session, raw))
        .then((id) => callback(null, `2.0.0 OK: queued as ${id}`))
        .catch((err) => {
          const reply = toSmtpReply(err);
          if (reply.responseCode >= 451 && reply.responseCode < 500 && !(err instanceof SmtpReply)) deps.log.error({ err, sessionId: session.id }, 'submission.failed');
          callback(reply);
        });
    },
  });
  server.on('error', (err) => deps.log.warn({ err: err.message }, 'submission.error'));
  return server;
}
