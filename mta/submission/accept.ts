// One submitted message through the accept path of POST /emails (same checks, quotas, idempotency): it answers
// the email's id once the email is committed, or throws the refusal (SmtpReply or ServiceError).
import { createHash } from 'node:crypto';
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { Knex } from 'knex';
import type { Config } from '../../shared/config.ts';
import type { Logger } from '../../shared/logger.ts';
import type { BlobStore } from '../../shared/blobs.ts';
import type { DnsResolver } from '../../shared/dns/resolver.ts';
import type { EnqueueDelivery } from '../../shared/emails/enqueue.ts';
import type { Redis } from '../../shared/redis.ts';
import { ServiceError } from '../../shared/errors.ts';
import { prepareEmail } from '../../shared/emails/prepare.ts';
import { persistEmails } from '../../shared/emails/persist.ts';
import { senderDomain } from '../../shared/emails/rules.ts';
import * as idempotency from '../../shared/idempotency/store.ts';
import { readSubmission, type Submitted } from './message.ts';
import { SmtpReply } from './replies.ts';
import type { Authed } from './credentials.ts';

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

/**
 * The message's bytes. Once the stream has passed `limit` the rest is read and dropped (the client is still
 * sending it, and the 552 comes after its final dot, RFC 5321 §4.2.5): an oversized message costs no memory.
 */
export async function readStream(stream: SMTPServerDataStream, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    if (stream.sizeExceeded) chunks.length = 0;
    else chunks.push(chunk as Buffer);
  }
  if (stream.sizeExceeded) throw new SmtpReply(552, `5.3.4 The message is larger than ${limit} bytes`);
  return Buffer.concat(chunks);
}

/** A Sender header names who sent the message for the author (RFC 5322 §3.6.2): its domain must be one we may send from, as From's. */
async function checkSender(db: Knex, authed: Authed, sender: Submitted['sender']): Promise<void> {
  if (!sender) return;
  try {
    await senderDomain(db, authed.team, authed.key, sender.domain);
  } catch (err) {
    if (err instanceof ServiceError && err.status === 403) throw new SmtpReply(550, `5.7.1 Sender header ${sender.address}: ${err.message}`);
    throw err;
  }
}

export async function accept(deps: SubmissionDeps, authed: Authed, session: SMTPServerSession, raw: Buffer): Promise<string> {
  const submitted = await readSubmission(raw, { to: session.envelope.rcptTo.map((r) => r.address) });
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
    await checkSender(deps.db, authed, submitted.sender);
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
