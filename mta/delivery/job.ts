// The deliver job (queues.deliver, data {emailId}): in one statement (lease.ts, shared with the jobs asking meanwhile)
// refetch the email and lease the recipients that are due (email.sent was recorded at acceptance or release); then
// deliver: simulator recipients without the network, the others grouped by domain, one SMTP transaction per domain
// (route → throttle → transmit → classify → record), in parallel; a topic send's or a broadcast's recipients one by
// one, each with its own List-Unsubscribe (compose.ts unsubscribeHeader), and only those still subscribed to the topic;
// with open or click tracking on, each recipient's copy with its own pixel and links (track.ts), one by one too. A
// duplicate or retried job is harmless: it leases nothing that another job holds or that is not due.
import { classify, type Answer } from '../../shared/bounces/classify.ts';
import {
  composeMessage,
  messageOf,
  needsUnsubscribeHeader,
  keepComposedMessage,
  unsubscribeHeader,
  type LoadedEmail,
} from './compose.ts';
import type { SigningKey } from './sign.ts';
import {
  notSentUnder,
  topicAudience,
  topicDeleted,
  topicDeletedSuppressed,
} from '../../shared/topics/subscriptions.ts';
import type { DeliveryDeps } from './deps.ts';
import { envelopeSender } from './envelope.ts';
import { routeDomain } from './route.ts';
import { simulate } from './simulator.ts';
import { transmit } from './transmit.ts';
import type { Attempt, LeasedRecipient, Outcome } from './types.ts';
import type { Lease } from './lease.ts';
import { reportOutcomes } from './report.ts';
import type { TrackingSettings } from './signing-domain.ts';
import { trackedCopies, trackedHtml, type TrackedCopies } from './track.ts';
import { fillUnsubscribeUrl, needsOwnUnsubscribeUrl, recipientUnsubscribeUrl } from './unsubscribe-url.ts';

interface Job {
  email: LoadedEmail;
  now: Date;
  lease: Lease;
  /** Some recipient was deferred: the job schedules its next attempt. */
  deferred: boolean;
  /** The message this job composed (not stored yet): stored for the retries once someone is deferred. */
  composed?: () => Promise<Buffer>;
}

/**
 * Records under the job's current lease token (lease.ts keeps renewals and records from overlapping), then reports
 * what was written (report.ts: a log line per recipient, the deliveries counter).
 */
const record = async (deps: DeliveryDeps, job: Job, attempt: Attempt): Promise<void> => {
  if (attempt.outcomes.some((o) => o.outcome.action === 'defer')) job.deferred = true;
  const recorded = await job.lease.use((token) =>
    deps.record({ ctx: { email: job.email, now: job.now, lease: token }, attempt }),
  );
  reportOutcomes(deps, job.email, attempt, recorded);
};

/** The ids every line about a job's email carries. */
const ids = (job: Job) => ({ emailId: job.email.id, requestId: job.email.request_id });

const elapsed = (since: number) => Math.round(performance.now() - since);

async function deliverSimulated(deps: DeliveryDeps, ctx: Job, recipients: LeasedRecipient[]): Promise<void> {
  const started = performance.now();
  const outcomes = recipients.map((recipient) => ({ recipient, outcome: simulate(recipient) }));
  const transcript = [
    '* simulator: no network',
    ...outcomes.map((o) => `* ${o.recipient.address}: ${o.outcome.response}`),
  ].join('\n');
  await record(deps, ctx, unconnected(deps.config.SIMULATOR_DOMAIN, transcript, ctx.now, elapsed(started), outcomes));
}

/** An attempt that opened no connection: the simulator, a DNS verdict, a local error, a check before delivery. */
function unconnected(
  domain: string,
  transcript: string,
  startedAt: Date,
  durationMs: number,
  outcomes: Attempt['outcomes'],
): Attempt {
  return { domain, mxHost: null, tls: false, transcript, startedAt, durationMs, outcomes };
}

function everyone(recipients: LeasedRecipient[], outcome: Outcome) {
  return recipients.map((recipient) => ({ recipient, outcome }));
}

/** Our own failure: a 451 4.3.0 deferral (never a bounce), failed only once it has lasted 72 h (state.ts). */
const localError = (err: unknown): Answer => ({ error: 'ELOCAL', message: (err as Error).message ?? String(err) });

interface Prepared {
  from: string;
  /** The message to sign: composed once for the email. */
  raw: Buffer;
  keys: SigningKey[];
  domainId: string;
  /** Null: tracking is off, or the composition has the recipient's tracked HTML already (prepare). */
  tracking: TrackingSettings | null;
  /** The domain's `tls: enforced`: no session in the clear (transmit.ts). */
  requireTls: boolean;
}

/**
 * The signed bytes for one SMTP transaction: DKIM-Signature fields, then `head` (a recipient's own header fields), then
 * the message.
 */
async function signed(
  deps: DeliveryDeps,
  ctx: Job,
  prepared: Prepared,
  head: string,
  raw = prepared.raw,
): Promise<Buffer> {
  const message = head ? Buffer.concat([Buffer.from(head, 'latin1'), raw]) : raw;
  const signing = deps.metrics.dkimSigning.startTimer();
  const signatures = await deps.signer.sign(message, prepared.keys, ctx.now);
  if (prepared.keys.length) signing();
  return signatures ? Buffer.concat([Buffer.from(signatures), message]) : message;
}

/** One recipient's signed copy: its tracked links and pixel, its unsubscribe link filled, its List-Unsubscribe. */
async function ownCopy(
  deps: DeliveryDeps,
  ctx: Job,
  ready: Prepared,
  copies: TrackedCopies | null,
  recipientId: string,
): Promise<Buffer> {
  const unsubscribe = { secrets: deps.secrets, publicBaseUrl: deps.config.PUBLIC_BASE_URL };
  let raw = copies?.copyFor(recipientId) ?? ready.raw;
  if (needsOwnUnsubscribeUrl(ctx.email))
    raw = await fillUnsubscribeUrl(raw, recipientUnsubscribeUrl(unsubscribe, recipientId)).catch((err) => {
      // A message the MIME splitter cannot read still goes out, as it is (as tracking does, track.ts).
      deps.log.warn({ err, ...ids(ctx) }, 'delivery.unsubscribe_url_skipped');
      return raw;
    });
  return signed(deps, ctx, ready, unsubscribeHeader(unsubscribe, ctx.email, recipientId), raw);
}

async function deliverDomain(
  deps: DeliveryDeps,
  ctx: Job,
  envelope: Pick<Prepared, 'from' | 'requireTls'>,
  message: () => Promise<Buffer>,
  domain: string,
  recipients: LeasedRecipient[],
): Promise<void> {
  if (!ctx.lease.proven()) {
    // Renewals have not come through for a while: the lease may pass to another job before this transaction ends.
    // Nothing is sent or recorded; the recipients are taken up again once the lease has run out (sweep.ts).
    deps.log.warn({ ...ids(ctx), domain }, 'delivery.lease_unproven');
    return;
  }
  const started = performance.now();
  let attempt: Attempt;
  try {
    const route = await routeDomain(deps.dns, domain);
    if (route.status === 'answer') {
      const outcome = classify(route.reply);
      attempt = unconnected(
        domain,
        `* DNS: ${route.reply.text}`,
        ctx.now,
        elapsed(started),
        everyone(recipients, outcome),
      );
    } else {
      const sent = await transmit(
        deps,
        route.hosts,
        envelope.from,
        recipients.map((r) => r.address),
        await message(),
        { requireTls: envelope.requireTls },
      );
      const outcomes = recipients.map((recipient) => ({
        recipient,
        outcome: classify(sent.answers.get(recipient.address) ?? localError('no answer recorded')),
      }));
      attempt = {
        domain,
        mxHost: sent.mxHost,
        tls: sent.tls,
        transcript: sent.transcript,
        startedAt: ctx.now,
        durationMs: elapsed(started),
        outcomes,
      };
    }
  } catch (err) {
    deps.log.error({ err, ...ids(ctx), domain }, 'delivery.local_error');
    attempt = unconnected(
      domain,
      `* local error: ${(err as Error).message}`,
      ctx.now,
      elapsed(started),
      everyone(recipients, classify(localError(err))),
    );
  }
  await record(deps, ctx, attempt);
}

async function prepare(deps: DeliveryDeps, ctx: Job, recipients: LeasedRecipient[]): Promise<Prepared | null> {
  const { email } = ctx;
  const sending = email.domain_id ? await deps.domains.get(email.domain_id) : null;
  if (!sending) return null;
  const from = envelopeSender(deps.secrets, email.id, sending.domain);
  const common = { from, keys: sending.keys, domainId: sending.domain.id, requireTls: sending.requireTls };
  // One recipient of a message this job composes: composed with its tracked HTML, which makes it that recipient's
  // copy. What a retry needs stored is the message as written, composed again only should the recipient be deferred.
  const stored = email.raw || email.raw_blob_key;
  const html =
    stored || recipients.length !== 1
      ? null
      : trackedHtml(deps, common.domainId, sending.tracking, email.html, recipients[0].id);
  if (html !== null) {
    ctx.composed = () => composeMessage(deps, deps.db, email);
    return { ...common, raw: await composeMessage(deps, deps.db, { ...email, html }), tracking: null };
  }
  const { raw, composed } = await messageOf(deps, email);
  if (composed) ctx.composed = () => Promise.resolve(raw);
  return { ...common, raw, tracking: sending.tracking };
}

/** The recipients' own tracked copies, or null (tracking off, nothing to track, or a message it cannot read). */
async function tracked(deps: DeliveryDeps, ctx: Job, ready: Prepared): Promise<TrackedCopies | null> {
  try {
    return await trackedCopies(deps, ready.domainId, ready.tracking, ready.raw);
  } catch (err) {
    // A message the MIME splitter cannot read still goes out, as it is: tracking is never a reason not to deliver.
    deps.log.warn({ err, ...ids(ctx) }, 'delivery.tracking_skipped');
    return null;
  }
}

/** Copies of their own for the recipients of one email in flight at once: ~8 MB of them, at least one. */
const OWN_COPY_BYTES = 8 * 1024 * 1024;

/** Runs `tasks` at most `limit` at a time. */
async function inTurns(tasks: (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
}

async function deliverRemote(deps: DeliveryDeps, ctx: Job, recipients: LeasedRecipient[]): Promise<void> {
  let prepared: Prepared | null;
  try {
    prepared = await prepare(deps, ctx, recipients);
  } catch (err) {
    deps.log.error({ err, ...ids(ctx) }, 'delivery.prepare_failed');
    const outcome = classify(localError(err));
    return record(
      deps,
      ctx,
      unconnected(
        recipients[0].domain,
        `* local error: ${(err as Error).message}`,
        ctx.now,
        0,
        everyone(recipients, outcome),
      ),
    );
  }
  if (!prepared) {
    // The sending domain was deleted after the email was accepted: nothing can sign it or take its bounces.
    const outcome: Outcome = {
      action: 'fail',
      rule: 'domain-removed',
      code: 554,
      enhanced: '5.7.0',
      response: '554 5.7.0 The sending domain no longer exists',
      failReason: 'domain_not_found',
    };
    return record(deps, ctx, unconnected(recipients[0].domain, '', ctx.now, 0, everyone(recipients, outcome)));
  }
  const ready = prepared;
  const copies = await tracked(deps, ctx, ready);
  if (needsUnsubscribeHeader(ctx.email) || copies || needsOwnUnsubscribeUrl(ctx.email)) {
    // A List-Unsubscribe URL, a tracked link, a filled {{{RESEND_UNSUBSCRIBE_URL}}} names one recipient: each gets
    // a copy signed with its own header and body, in one transaction of its own, a bounded number at a time.
    const tasks = recipients.map(
      (r) => () =>
        deliverDomain(deps, ctx, ready, () => ownCopy(deps, ctx, ready, copies, r.id), r.domain.toLowerCase(), [r]),
    );
    return inTurns(tasks, Math.max(1, Math.floor(OWN_COPY_BYTES / Math.max(1, ready.raw.length))));
  }
  // One signature for every domain: the same bytes go to each.
  let once: Promise<Buffer> | undefined;
  const message = () => (once ??= signed(deps, ctx, ready, ''));
  const byDomain = new Map<string, LeasedRecipient[]>();
  for (const r of recipients)
    byDomain.set(r.domain.toLowerCase(), [...(byDomain.get(r.domain.toLowerCase()) ?? []), r]);
  await Promise.all([...byDomain].map(([domain, group]) => deliverDomain(deps, ctx, ready, message, domain, group)));
}

/**
 * A topic send goes only to the topic's subscribers as they are now: whoever opted out or unsubscribed from
 * everything since the accept (a scheduled send, a retry) is suppressed without an attempt. A topic deleted since
 * reaches nobody more: its opt-outs were deleted with it, so sending on would mail whoever had opted out. Answers
 * the recipients still to deliver to.
 */
async function subscribersOnly(deps: DeliveryDeps, job: Job, leased: LeasedRecipient[]): Promise<LeasedRecipient[]> {
  const topicId = job.email.topic_id!;
  const audience = await topicAudience(
    deps.db,
    job.email.team_id,
    topicId,
    leased.map((r) => r.address),
  );
  const left = audience ? leased.filter((r) => !audience.subscribed(r.address)) : leased;
  if (left.length === 0) return leased;
  const outcomes = left.map((recipient) => ({
    recipient,
    outcome: {
      action: 'suppress' as const,
      rule: 'topic',
      code: 0,
      enhanced: null,
      ...(audience
        ? notSentUnder(audience.topic, recipient.address, audience.standing(recipient.address))
        : { response: topicDeleted, suppressed: topicDeletedSuppressed(recipient.address, topicId) }),
    },
  }));
  await record(deps, job, unconnected(left[0].domain, '', job.now, 0, outcomes));
  return audience ? leased.filter((r) => audience.subscribed(r.address)) : [];
}

export interface DeliverySummary {
  /** Recipients this job attempted. */
  leased: number;
}

export async function processDelivery(deps: DeliveryDeps, emailId: string, now = new Date()): Promise<DeliverySummary> {
  // One statement: the email and the lease on its due recipients (nothing else is written: see lease.ts), shared with
  // the other jobs that ask meanwhile.
  const work = await deps.lease(emailId, now);
  if (!work) return { leased: 0 };
  const { email, lease } = work;
  const leased = lease.recipients;
  const job: Job = { email, now, lease, deferred: false };
  let releaseMemory: (() => void) | undefined;
  try {
    // Its bodies are in memory already (a few KB, mostly); the message it composes and signs comes under the budget.
    releaseMemory = await deps.memory.take(email.size_bytes);
    const open = email.topic_id ? await subscribersOnly(deps, job, leased) : leased;
    const simulated = open.filter((r) => r.domain.toLowerCase() === deps.config.SIMULATOR_DOMAIN);
    const remote = open.filter((r) => r.domain.toLowerCase() !== deps.config.SIMULATOR_DOMAIN);
    await Promise.all([
      simulated.length ? deliverSimulated(deps, job, simulated) : null,
      remote.length ? deliverRemote(deps, job, remote) : null,
    ]);
  } finally {
    releaseMemory?.();
    lease.release();
  }
  if (job.deferred && job.composed) {
    // Not under the lease: a crash before this only makes the retry compose the same bytes again.
    await job
      .composed()
      .then((raw) => keepComposedMessage(deps, email, raw, now))
      .catch((err) => deps.log.warn({ err, ...ids(job) }, 'delivery.store_failed'));
  }
  // Only a job that deferred someone has a next attempt to schedule (a recipient another job deferred is that job's).
  if (!job.deferred || !deps.scheduleRetry) return { leased: leased.length };
  const next = await deps
    .db('email_recipients')
    .where({ email_id: emailId, status: 'deferred' })
    .min({ at: 'next_attempt_at' })
    .first();
  if (next?.at) await deps.scheduleRetry(emailId, new Date(next.at));
  return { leased: leased.length };
}
