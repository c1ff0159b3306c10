// Mail to a return-path address (ARCHITECTURE, "The path of a received email", point 4): a bounce or a complaint about
// one of our emails, never a received email. The address token named the email (checked at RCPT); the report
// (report.ts) names the recipients. In one transaction with the message's processed mark (stored → processed), so a
// rerun of the job changes nothing:
//
// | report says         | recipient now                          | result                                       |
// | ------------------- | -------------------------------------- | -------------------------------------------- |
// | failed              | delivered (an asynchronous bounce)     | bounced, email.bounced, suppression if Perm. |
// | failed              | queued or deferred, not leased         | bounced the same (the remote MTA answered)   |
// | failed or complaint | being delivered (a live lease)         | job fails; the sweep brings it back later    |
// | failed              | bounced, suppressed, failed, canceled  | nothing (a second report of the bounce)      |
// | complaint           | ever delivered, not yet complained     | complained_at, email.complained, suppression |
// | complaint           | complained already, or never delivered | nothing                                      |
// | delayed             | any                                    | a log only: our part, the handover, is done  |
//
// A report about a recipient the email does not have, for an email of another team, or that reads as none of the
// formats is logged and marked processed.
import type { Knex } from 'knex';
import type { BlobStore } from '../../shared/blobs.ts';
import type { Logger } from '../../shared/logger.ts';
import { recordEvent, type EventType } from '../../shared/events.ts';
import { emailEventData, type EmailRow } from '../../shared/emails/present.ts';
import { refreshEmail } from '../../shared/emails/last-event.ts';
import { canonicalAddress, suppressRecipient } from '../../shared/suppressions/suppressions.ts';
import { readReport, type Report } from './report.ts';
import type { Finding } from './finding.ts';
import { reportedBounce } from './bounce-type.ts';
import { readRaw } from '../../shared/receiving/raw.ts';

export interface BounceDeps {
  db: Knex;
  blobs: BlobStore;
  log: Logger;
}

/** The receive job's processed mark: moves the message stored → processed, false when another run already did. */
export type MarkProcessed = (trx: Knex, messageId: string) => Promise<boolean>;

interface RecipientRow {
  id: string;
  address: string;
  status: string;
  leased_until: Date | null;
  delivered_at: Date | null;
  complained_at: Date | null;
}

interface Change {
  type: EventType;
  address: string;
  extra: Record<string, unknown>;
  suppress: 'bounce' | 'complaint' | null;
}

/** A recipient the report names is in a delivery right now; its outcome is not ours to overwrite yet. */
export class RecipientInFlight extends Error {}

/**
 * Each finding's recipient, by the addresses the report gives. When none of them is a recipient (an alias the
 * remote expanded, a redacted complaint, a bounce naming a display name only), the returned message's To and
 * Cc decide, but only when exactly one of them is a recipient.
 */
function match(report: Report, recipients: RecipientRow[]): { finding: Finding; recipient: RecipientRow | null }[] {
  const by = new Map(recipients.map((r) => [canonicalAddress(r.address), r]));
  const matched = report.findings.map((finding) => ({
    finding,
    recipient: finding.addresses.map((a) => by.get(canonicalAddress(a))).find((r) => r !== undefined) ?? null,
  }));
  if (matched.some((m) => m.recipient)) return matched;
  const named = [
    ...new Set(report.originalRecipients.map((a) => by.get(canonicalAddress(a))).filter((r) => r !== undefined)),
  ];
  const relevant = matched.find((m) => m.finding.kind !== 'other');
  if (named.length === 1 && relevant) relevant.recipient = named[0];
  return matched;
}

async function apply(trx: Knex, log: Logger, finding: Finding, r: RecipientRow, now: Date): Promise<Change | null> {
  const context = { recipient: r.address, status: r.status, detail: finding.detail };
  if (finding.kind === 'delayed' || finding.kind === 'other') {
    log.info(
      { ...context, reported: finding.status },
      finding.kind === 'delayed' ? 'bounce.delayed' : 'bounce.ignored',
    );
    return null;
  }
  if ((r.status === 'queued' || r.status === 'deferred') && r.leased_until && r.leased_until > now) {
    throw new RecipientInFlight(`recipient ${r.id} is being delivered until ${r.leased_until.toISOString()}`);
  }
  if (finding.kind === 'failed') {
    if (!['delivered', 'queued', 'deferred'].includes(r.status)) {
      log.info(context, 'bounce.recipient_settled');
      return null;
    }
    const b = reportedBounce(finding.status, finding.diagnostic);
    await trx('email_recipients').where({ id: r.id }).update({
      status: 'bounced',
      last_response: b.response,
      enhanced_code: b.enhanced,
      bounce_type: b.type,
      bounce_sub_type: b.subType,
      next_attempt_at: null,
      updated_at: now,
    });
    r.status = 'bounced';
    const bounce = { type: b.type, subType: b.subType, message: b.message, diagnosticCode: b.diagnosticCode };
    return {
      type: 'email.bounced',
      address: r.address,
      extra: { bounce },
      suppress: b.type === 'Permanent' ? 'bounce' : null,
    };
  }
  // A complaint: only a recipient that got the email can complain, and once.
  if (r.complained_at || !r.delivered_at) {
    log.info(context, r.complained_at ? 'bounce.complaint_repeated' : 'bounce.complaint_undelivered');
    return null;
  }
  await trx('email_recipients').where({ id: r.id }).update({ complained_at: now, updated_at: now });
  r.complained_at = now;
  return { type: 'email.complained', address: r.address, extra: {}, suppress: 'complaint' };
}

/** One event per kind and payload, naming the recipients it concerns in `to` (as the MTA's record stage does). */
async function record(trx: Knex, email: EmailRow, changes: Change[]): Promise<void> {
  const groups = new Map<string, { type: EventType; to: string[]; extra: Record<string, unknown> }>();
  for (const c of changes) {
    const key = `${c.type}|${JSON.stringify(c.extra)}`;
    const g = groups.get(key) ?? { type: c.type, to: [], extra: c.extra };
    g.to.push(c.address);
    groups.set(key, g);
  }
  for (const g of groups.values())
    await recordEvent(trx, email.team_id, g.type, emailEventData(email, { to: g.to, ...g.extra }));
  for (const c of changes) if (c.suppress) await suppressRecipient(trx, email.team_id, c.address, c.suppress, email.id);
}

export async function processBounce(
  deps: BounceDeps,
  messageId: string,
  markProcessed: MarkProcessed,
): Promise<'processed' | 'skipped'> {
  const row:
    { id: string; team_id: string; raw_blob_key: string | null; email_id: string | null; status: string } | undefined =
    await deps
      .db('received_messages')
      .where({ id: messageId, kind: 'bounce' })
      .first('id', 'team_id', 'raw_blob_key', 'email_id', 'status');
  if (!row || row.status !== 'stored') return 'skipped';
  const log = deps.log.child({ messageId, emailId: row.email_id });
  const raw = await readRaw(deps.db, deps.blobs, row);
  if (!raw) throw new Error(`raw message missing: ${row.raw_blob_key ?? 'received_raw'}`);
  let report: Report | null = null;
  try {
    report = readReport(raw);
  } catch (err) {
    log.warn({ err }, 'bounce.parse_failed');
  }

  const outcome = await deps.db.transaction(async (trx) => {
    if (!(await markProcessed(trx, row.id))) return null;
    if (!report || report.findings.length === 0)
      return { format: report?.format ?? null, changes: [] as Change[], unparseable: true };
    // One writer per email at a time: the MTA's record stage locks the same row.
    const email: EmailRow | undefined = row.email_id
      ? await trx('emails').where({ id: row.email_id }).forUpdate().first()
      : undefined;
    if (!email || email.team_id !== row.team_id) {
      log.warn({ teamId: row.team_id }, 'bounce.email_not_found');
      return { format: report.format, changes: [] as Change[], unparseable: false };
    }
    const recipients: RecipientRow[] = await trx('email_recipients')
      .where({ email_id: email.id })
      .select('id', 'address', 'status', 'leased_until', 'delivered_at', 'complained_at');
    const now = new Date();
    const changes: Change[] = [];
    for (const { finding, recipient } of match(report, recipients)) {
      if (!recipient) {
        log.warn(
          { addresses: finding.addresses, kind: finding.kind, detail: finding.detail },
          'bounce.unknown_recipient',
        );
        continue;
      }
      const change = await apply(trx, log, finding, recipient, now);
      if (change) changes.push(change);
    }
    if (changes.length) {
      await record(trx, email, changes);
      await refreshEmail(
        trx,
        email.id,
        now,
        changes.some((c) => c.type === 'email.complained'),
      );
    }
    return { format: report.format, changes, unparseable: false };
  });
  if (!outcome) return 'skipped';
  if (outcome.unparseable) log.warn({ format: outcome.format }, 'bounce.unparseable');
  else
    log.info(
      {
        format: outcome.format,
        bounced: outcome.changes.filter((c) => c.type === 'email.bounced').map((c) => c.address),
        complained: outcome.changes.filter((c) => c.type === 'email.complained').map((c) => c.address),
      },
      'bounce.processed',
    );
  return 'processed';
}
