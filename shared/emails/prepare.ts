// Step one of accepting a send: everything that can be checked before the transaction (addresses, sender
// domain, reach, suppressions, recipients that cannot receive mail, content, schedule). Nothing is written.
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import type { DnsResolver } from '../dns/resolver.ts';
import type { ApiKeyRow } from '../api-keys/keys.ts';
import type { TeamRow } from '../teams/teams.ts';
import type { DomainRow } from '../domains/store.ts';
import { ServiceError } from '../errors.ts';
import { AddressError, formatMailbox, parseMailbox, type Mailbox } from './addresses.ts';
import { parseScheduledAt, ScheduleError } from './schedule-phrase.ts';
import {
  checkHeaders,
  checkTags,
  decodeAttachment,
  hasUnsubscribe,
  htmlToText,
  MAX_LINE,
  MAX_MESSAGE_BYTES,
  unfoldableRun,
  type AttachmentInput,
  type DecodedAttachment,
} from './content.ts';
import { checkReach, reachContext, reachIsLimited, senderLookups } from './rules.ts';
import { findUnusable, type Unusable } from './recipient-checks.ts';
import { fetchOptions, fetchPathAttachments } from './fetch-attachment.ts';
import { notSentUnder, topicAudience } from '../topics/subscriptions.ts';
import type { EmailRow } from './present.ts';
import { withTemplate, type TemplateCache } from '../templates/send.ts';
import { refuseFailedChecks } from '../checks/run.ts';

export const MAX_RECIPIENTS = 50;

export interface SendInput {
  from?: string;
  to?: string | string[];
  cc?: string | string[] | null;
  bcc?: string | string[] | null;
  reply_to?: string | string[] | null;
  subject?: string;
  html?: string | null;
  text?: string | null;
  headers?: Record<string, string> | null;
  attachments?: AttachmentInput[] | null;
  tags?: { name: string; value: string }[] | null;
  scheduled_at?: string | null;
  topic_id?: string | null;
  template?: { id: string; variables?: Record<string, unknown> } | null;
  /** A campaign send (under a topic) goes out even when a pre-send check fails. */
  acknowledge_checks?: boolean | null;
}

/** Who asks for a send: the team, its API key (none for a session), and the door it came through. */
export interface Caller {
  team: TeamRow & { daily_send_limit?: number | null; monthly_send_limit?: number | null };
  key: ApiKeyRow | null;
  source: 'api' | 'smtp';
  /**
   * What the process logs of this request call it (the api's X-Request-Id, the submission session's id): kept with
   * the email (emails.request_id), so the mta's and the worker's lines about it carry it too.
   */
  requestId?: string | null;
}

export interface PreparedRecipient {
  address: string;
  domain: string;
  kind: 'to' | 'cc' | 'bcc';
  status: 'queued' | 'suppressed' | 'failed';
  reason: string | null;
  /**
   * Why it is not sent to: a suppression list entry's origin, `topic` (not subscribed to the send's topic) or
   * `contact_unsubscribed` (its contact is unsubscribed from everything; only a send under a topic asks).
   */
  suppression?: { origin: string };
}

/** A send every check has passed: the email row's content fields as they will be written, and what decides the rest. */
export interface PreparedEmail extends Pick<
  EmailRow,
  'to' | 'cc' | 'bcc' | 'reply_to' | 'subject' | 'html' | 'text' | 'headers' | 'tags'
> {
  from: Mailbox;
  domain: DomainRow;
  attachments: DecodedAttachment[];
  scheduled_at: Date | null;
  recipients: PreparedRecipient[];
  /** The send's topic: only its subscribers are sent to, each with a List-Unsubscribe of their own. */
  topic: { id: string; name: string } | null;
  templateId?: string | null;
  unsubscribe: boolean;
  size: number;
  /** A message submitted over SMTP: its MIME as it is delivered, and its own Message-ID if it had one. */
  raw?: { bytes: Buffer; messageId: string | null };
}

export interface PrepareContext {
  config: Config;
  dns: DnsResolver;
  /** Compiled template versions (shared/templates/send.ts), one cache per process; without it, none is kept. */
  templates?: TemplateCache;
}

const list = (v: string | string[] | null | undefined): string[] => (v == null ? [] : Array.isArray(v) ? v : [v]);

function fieldError(
  path: string,
  message: string,
  extra: Pick<ServiceError['options'], 'details' | 'smtp'> = {},
): ServiceError {
  return new ServiceError('validation_error', `Invalid \`${path}\`: ${message}`, {
    errors: [{ path, message }],
    ...extra,
  });
}

function mailboxes(field: string, values: string[]): Mailbox[] {
  return values.map((v, i) => {
    try {
      return parseMailbox(v);
    } catch (err) {
      if (err instanceof AddressError)
        throw fieldError(values.length > 1 || Array.isArray(v) ? `${field}.${i}` : field, `\`${v}\` ${err.message}.`);
      throw err;
    }
  });
}

const causeMessages: Record<Unusable['cause'], string> = {
  reserved_domain: 'is at a reserved domain that never receives mail',
  typo_domain: 'looks like a misspelled domain',
  no_mail: 'is at a domain that accepts no mail',
  dead_address: 'has bounced permanently before',
};

/** The fields every send needs (a template's from and subject already applied), checked first. */
function required(input: SendInput): { from: string; subject: string } {
  if (!input.from) throw new ServiceError('missing_required_field', 'Missing `from` field.');
  if (input.subject === undefined) throw new ServiceError('missing_required_field', 'Missing `subject` field.');
  return { from: input.from, subject: input.subject };
}

/** Every address field parsed (the first bad one refused by its path), and the recipient counts checked. */
function readAddresses(input: SendInput, fromField: string) {
  const [from] = mailboxes('from', [fromField]);
  const to = mailboxes('to', list(input.to));
  const cc = mailboxes('cc', list(input.cc));
  const bcc = mailboxes('bcc', list(input.bcc));
  const replyTo = mailboxes('reply_to', list(input.reply_to));
  if (to.length === 0) throw new ServiceError('missing_required_field', 'Missing `to` field.');
  if (to.length + cc.length + bcc.length > MAX_RECIPIENTS)
    throw fieldError('to', `At most ${MAX_RECIPIENTS} recipients in to, cc and bcc together.`);
  if (replyTo.length > MAX_RECIPIENTS) throw fieldError('reply_to', `At most ${MAX_RECIPIENTS} addresses in reply_to.`);
  return { from, to, cc, bcc, replyTo };
}

/**
 * One line of at most 998 characters. A message composed from these fields (not one submitted over SMTP, delivered
 * as submitted and its lines checked there) also needs every run of the subject to fit on a line once folded
 * (RFC 5322 §2.1.1, unfoldableRun).
 */
function checkSubject(subject: string, composed: boolean): void {
  if (/[\r\n\0]/.test(subject)) throw fieldError('subject', 'The subject must be one line.');
  if (subject.length > 998) throw fieldError('subject', 'The subject is longer than 998 characters.');
  const run = composed ? unfoldableRun('Subject', subject) : null;
  if (run)
    throw fieldError(
      'subject',
      `The subject has ${run.length} characters with no space to fold the line at; a line of mail holds at most ${MAX_LINE} (RFC 5322 §2.1.1), so at most ${run.limit} here.`,
    );
}

/** The html and text parts as they will be stored: text made from the html when none is given. */
function readBody(input: SendInput, source: Caller['source']): { html: string | null; text: string | null } {
  const html = input.html ?? null;
  if (html === null && (input.text === undefined || input.text === null))
    throw new ServiceError('missing_required_field', 'Missing `html` or `text` field.');
  // Text from HTML when none is given; `""` opts out (resend-api.md §2).
  const text =
    input.text === undefined || input.text === null
      ? html
        ? htmlToText(html)
        : null
      : input.text === ''
        ? null
        : input.text;
  // `text: ""` opts out of the generated text, not of having a body: with no html left the email would be empty.
  // A template brings its own body. An SMTP submission is delivered as its own MIME, whose body may be empty
  // (RFC 5322 §3.5 makes the body optional).
  if (!html && !text && !input.template && source !== 'smtp') {
    const path = input.text === '' ? 'text' : 'html';
    throw fieldError(
      path,
      'the email would have no body. Give `html`, or a `text` that is not empty (`text: ""` only turns off the text generated from `html`).',
    );
  }
  return { html, text };
}

/** The attachments decoded (those given by `path` fetched first), and the message's size checked with them. */
async function readAttachments(
  ctx: PrepareContext,
  given: AttachmentInput[],
  body: { html: string | null; text: string | null },
): Promise<{ attachments: DecodedAttachment[]; size: number }> {
  const inputs = given.some((a) => a.path && !a.content)
    ? await fetchPathAttachments(given, fetchOptions(ctx.config, ctx.dns))
    : given.map((a) => ({ input: a, fetched: undefined }));
  const attachments = inputs.map((a, i) => decodeAttachment(a.input, i, a.fetched));
  const size =
    Buffer.byteLength(body.html ?? '') +
    Buffer.byteLength(body.text ?? '') +
    attachments.reduce((n, a) => n + Math.ceil(a.content.length / 3) * 4, 0);
  // SMTP submission answers 552 5.3.4 (RFC 3463: message too big for system).
  if (size > MAX_MESSAGE_BYTES)
    throw fieldError('attachments', `The message is larger than ${MAX_MESSAGE_BYTES / 1024 / 1024} MB.`, {
      smtp: { code: 552, enhanced: '5.3.4' },
    });
  return { attachments, size };
}

function readSchedule(scheduledAt: string | null | undefined, now: Date): Date | null {
  if (!scheduledAt) return null;
  try {
    return parseScheduledAt(scheduledAt, now);
  } catch (err) {
    if (err instanceof ScheduleError) throw fieldError('scheduled_at', `\`${scheduledAt}\` ${err.message}.`);
    throw err;
  }
}

/** One recipient per address (compared in lower case), to before cc before bcc: the first mention decides its kind. */
function recipientsOf(to: Mailbox[], cc: Mailbox[], bcc: Mailbox[]): PreparedRecipient[] {
  const recipients: PreparedRecipient[] = [];
  const seen = new Set<string>();
  for (const [kind, boxes] of [
    ['to', to],
    ['cc', cc],
    ['bcc', bcc],
  ] as const) {
    for (const b of boxes) {
      const key = b.address.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      recipients.push({ address: b.address, domain: b.domain, kind, status: 'queued', reason: null });
    }
  }
  return recipients;
}

/** Recipients on the team's suppression list (`byEmail`: lower-case address → the entry's origin) are not sent to. */
function markSuppressed(recipients: PreparedRecipient[], byEmail: Map<string, string>): void {
  for (const r of recipients) {
    const origin = byEmail.get(r.address.toLowerCase());
    if (origin)
      Object.assign(r, {
        status: 'suppressed',
        reason: `on the team's suppression list (${origin})`,
        suppression: { origin },
      });
  }
}

/**
 * Recipients still to send to that cannot receive mail (recipient-checks.ts) are failed; a send none of whose
 * recipients can receive it is refused, naming the first. `dead`: the platform-wide hard bounces senderLookups read.
 */
async function markUnusable(
  db: Knex,
  ctx: PrepareContext,
  recipients: PreparedRecipient[],
  dead: Set<string>,
): Promise<void> {
  const open = recipients.filter((r) => r.status === 'queued');
  const unusable = await findUnusable(
    db,
    ctx.dns,
    open.map((r) => ({ address: r.address.toLowerCase(), domain: r.domain })),
    { exempt: (d) => d === ctx.config.SIMULATOR_DOMAIN, reservedAllowed: ctx.config.RESERVED_TLDS_ALLOWED },
    dead,
  );
  for (const r of open) {
    const why = unusable.get(r.address.toLowerCase());
    if (why) Object.assign(r, { status: 'failed', reason: why.cause });
  }
  if (recipients.every((r) => r.status === 'failed')) {
    const first = unusable.get(recipients[0].address.toLowerCase())!;
    throw new ServiceError(
      'validation_error',
      `No recipient can receive this email: ${recipients[0].address} ${causeMessages[first.cause]}.`,
      {
        details: {
          reason: 'invalid_recipient',
          cause: first.cause,
          recipient: recipients[0].address,
          ...(first.cause === 'typo_domain' ? { suggestion: first.suggestion } : {}),
        },
      },
    );
  }
}

/**
 * Checks a send in the order its refusals are answered: the fields alone first, then what the database and DNS
 * say of the sender and the recipients (one query for the domain and the suppressions; the reach and the topic
 * only when the send needs them).
 */
export async function prepareEmail(
  db: Knex,
  ctx: PrepareContext,
  caller: Caller,
  given: SendInput,
  now: Date,
): Promise<PreparedEmail> {
  const { input, sent: template } = await withTemplate(db, ctx.templates, caller.team.id, given);
  const { from: fromField, subject } = required(input);
  const { from, to, cc, bcc, replyTo } = readAddresses(input, fromField);
  const composed = caller.source !== 'smtp';
  checkSubject(subject, composed);
  const { html, text } = readBody(input, caller.source);
  const headers = checkHeaders(input.headers ?? {}, { composed });
  const tags = checkTags(input.tags ?? []);
  const { attachments, size } = await readAttachments(ctx, input.attachments ?? [], { html, text });
  const scheduledAt = readSchedule(input.scheduled_at, now);

  // The domain and what the suppression lists say of the recipients, in one query.
  const lookups = await senderLookups(
    db,
    caller.team,
    caller.key,
    from.domain,
    [...to, ...cc, ...bcc].map((b) => b.address.toLowerCase()),
  );
  const { domain } = lookups;
  const recipients = recipientsOf(to, cc, bcc);
  // The reach lookups (identities, verified domains) cost two queries: only a limited sender needs them.
  if (reachIsLimited(caller.team, domain))
    checkReach(caller.team, domain, recipients, await reachContext(db, caller.team.id, ctx.config.SIMULATOR_DOMAIN));
  markSuppressed(recipients, lookups.suppressed);
  const topic = input.topic_id ? await topicOf(db, caller.team.id, input.topic_id, recipients) : null;
  // A campaign send: the pre-send checks, unless acknowledged (every copy carries our List-Unsubscribe).
  if (topic && !input.acknowledge_checks)
    await refuseFailedChecks({ subject, html, text, listUnsubscribe: true, blocks: template?.blocks });
  await markUnusable(db, ctx, recipients, lookups.dead);

  return {
    from,
    domain,
    subject,
    html,
    text,
    headers,
    tags,
    attachments,
    recipients,
    size,
    to: to.map(formatMailbox),
    cc: cc.map(formatMailbox),
    bcc: bcc.map(formatMailbox),
    reply_to: replyTo.map(formatMailbox),
    scheduled_at: scheduledAt,
    topic,
    templateId: template?.template.id ?? null,
    // A topic send carries our List-Unsubscribe (or the customer's own). The text as given: one made from the html
    // puts a link's URL on the line of the words around it ("reply STOP to unsubscribe, or visit <a href=…>").
    unsubscribe: topic !== null || hasUnsubscribe(html, input.text == null ? null : text, headers),
  };
}

/**
 * The send's topic (422 when the team has none of that id), with every recipient who is not subscribed to it, or
 * whose contact is unsubscribed from everything, marked suppressed: they are not sent to, and email.suppressed says
 * why. The choices and the contacts are read in the topic's own query (topicAudience), one for all the recipients.
 */
async function topicOf(
  db: Knex,
  teamId: string,
  topicId: string,
  recipients: PreparedRecipient[],
): Promise<{ id: string; name: string }> {
  const audience = await topicAudience(
    db,
    teamId,
    topicId,
    recipients.map((r) => r.address),
  );
  if (!audience)
    throw new ServiceError('validation_error', `Topic \`${topicId}\` not found.`, {
      status: 422,
      errors: [{ path: 'topic_id', message: 'not found' }],
    });
  for (const r of recipients) {
    const standing = audience.standing(r.address);
    if (r.status !== 'queued' || standing === 'subscribed') continue;
    const origin = standing === 'unsubscribed' ? 'contact_unsubscribed' : 'topic';
    const reason = notSentUnder(audience.topic, r.address, standing).response;
    Object.assign(r, { status: 'suppressed', reason, suppression: { origin } });
  }
  return { id: audience.topic.id, name: audience.topic.name };
}
