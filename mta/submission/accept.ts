// One submitted message through the accept path of POST /emails (same checks, quotas, idempotency): it answers
// the email's id once the email is committed, or throws the refusal (SmtpReply or ServiceError).
import { createHash } from 'node:crypto';
import type { SMTPServerSession } from 'smtp-server';
import type { Knex } from 'knex';
import type { Config } from '../../shared/config.ts';
import type { Logger } from '../../shared/logger.ts';
import type { BlobStore } from '../../shared/blobs.ts';
import type { DnsResolver } from '../../shared/dns/resolver.ts';
import type { EnqueueDelivery } from '../../shared/emails/enqueue.ts';
import type { Redis } from '../../shared/redis.ts';
import { ServiceError } from '../../shared/errors.ts';
import type { Caller } from '../../shared/emails/prepare.ts';
import { acceptSends } from '../../shared/emails/accept.ts';
import { senderDomain } from '../../shared/emails/rules.ts';
import * as idempotency from '../../shared/idempotency/store.ts';
import type { Reservation } from '../../shared/idempotency/store.ts';
import { readSubmission, type Submitted } from './message.ts';
import { SmtpReply } from '../../shared/smtp/reply.ts';
import type { Authed } from './credentials.ts';
import type { EmailsAccepted } from '../../shared/metrics/sends.ts';
import type { SessionMetrics } from '../../shared/metrics/sessions.ts';

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
  /** Sessions of the listeners and emails accepted (shared/metrics/mta.ts). */
  metrics?: { emailsAccepted: EmailsAccepted; submissionSessions?: SessionMetrics<'listener'> };
}

/**
 * A Sender header names who sent the message for the author (RFC 5322 §3.6.2): its domain must be one we may send from,
 * as From's.
 */
async function checkSender(db: Knex, authed: Authed, sender: Submitted['sender']): Promise<void> {
  if (!sender) return;
  try {
    await senderDomain(db, authed.team, authed.key, sender.domain);
  } catch (err) {
    if (err instanceof ServiceError && err.status === 403)
      throw new SmtpReply(550, `5.7.1 Sender header ${sender.address}: ${err.message}`);
    throw err;
  }
}

export async function accept(
  deps: SubmissionDeps,
  authed: Authed,
  session: SMTPServerSession,
  raw: Buffer,
): Promise<string> {
  const submitted = await readSubmission(raw, { to: session.envelope.rcptTo.map((r) => r.address) });
  // The session's id is what the submission's log lines name (sessionId): the email keeps it as its request id.
  const caller: Caller = { team: authed.team, key: authed.key, source: 'smtp', requestId: session.id };
  let reservation: Reservation | null = null;
  if (submitted.idempotencyKey !== null) {
    idempotency.validateKey(submitted.idempotencyKey);
    const reserved = await idempotency.reserve(
      deps.db,
      authed.team.id,
      submitted.idempotencyKey,
      createHash('sha256').update(submitted.raw).digest('hex'),
    );
    if (reserved.kind === 'replay') return (reserved.body as { id: string }).id;
    reservation = reserved.reservation;
  }
  const read = async (s: Submitted) => {
    await checkSender(deps.db, authed, s.sender);
    return {
      input: s.input,
      raw: { bytes: s.raw, messageId: s.messageId ? `<${s.messageId.replace(/^<|>$/g, '')}>` : null },
    };
  };
  try {
    const accepted = await acceptSends(deps, caller, [submitted], { now: new Date(), read, batch: null, reservation });
    return (accepted as { id: string }).id;
  } catch (err) {
    if (reservation) await idempotency.release(deps.db, reservation);
    throw err;
  }
}
