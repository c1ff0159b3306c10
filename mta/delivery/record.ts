// The record stage: one transaction per attempt outcome. It moves the recipients (only those this job still
// holds the lease of), writes the delivery_attempts row with its transcript, records the events, adds the
// suppressions of hard bounces, and recomputes the email's last_event and status. A crash before the commit
// leaves the lease to expire and the sweep to try again; after it, everything is known at once.
import type { Knex } from 'knex';
import type { Logger } from '../../shared/logger.ts';
import { recordEvent, type EventType } from '../../shared/events.ts';
import { newId } from '../../shared/ids.ts';
import { emailEventData, type EmailRow } from '../../shared/emails/present.ts';
import { addSuppression, addressProblem } from '../../shared/suppressions/suppressions.ts';
import { lastEvent, nextState, type NextState } from './state.ts';
import type { Attempt } from './types.ts';

export interface RecordContext {
  email: EmailRow;
  /** The job's lease token (email_recipients.leased_until as it wrote it). */
  lease: string;
  now: Date;
}

interface Applied {
  address: string;
  state: NextState;
  suppressedMessage?: string;
}

function eventExtra(event: string, a: Applied): Record<string, unknown> {
  if (event === 'bounced') return { bounce: a.state.bounce };
  if (event === 'failed') return { failed: a.state.failed };
  if (event === 'suppressed') {
    return { suppressed: { type: 'OnAccountSuppressionList', reason: 'previous_bounce', message: a.suppressedMessage, diagnosticCode: [] } };
  }
  return {};
}

/** One event per kind and payload, naming the recipients it concerns in `to`. */
async function recordEvents(trx: Knex, email: EmailRow, applied: Applied[]): Promise<void> {
  const groups = new Map<string, { type: EventType; to: string[]; extra: Record<string, unknown> }>();
  for (const a of applied) {
    for (const event of a.state.events) {
      const extra = eventExtra(event, a);
      const key = `${event}|${JSON.stringify(extra)}`;
      const group = groups.get(key) ?? { type: `email.${event}` as EventType, to: [], extra };
      group.to.push(a.address);
      groups.set(key, group);
    }
  }
  for (const g of groups.values()) await recordEvent(trx, email.team_id, g.type, emailEventData(email, { to: g.to, ...g.extra }));
}

/** last_event and status from the recipients as they now are (state.ts explains the order). */
async function refreshEmail(trx: Knex, emailId: string, now: Date, complained: boolean): Promise<void> {
  const email = await trx('emails').where({ id: emailId }).first('last_event', 'status');
  const recipients: { status: string; delay_notified: boolean }[] = await trx('email_recipients').where({ email_id: emailId }).select('status', 'delay_notified');
  const pending = recipients.some((r) => r.status === 'queued' || r.status === 'deferred');
  await trx('emails').where({ id: emailId }).update({
    last_event: lastEvent(complained ? 'complained' : email.last_event, recipients),
    status: pending ? email.status : 'done',
    updated_at: now,
  });
}

export async function recordAttempt(deps: { db: Knex; log: Logger }, ctx: RecordContext, attempt: Attempt): Promise<void> {
  const { email, now } = ctx;
  await deps.db.transaction(async (trx) => {
    // One writer per email at a time, so concurrent domain groups each see the others' results.
    await trx('emails').where({ id: email.id }).forUpdate().first('id');
    const applied: Applied[] = [];
    for (const { recipient, outcome } of attempt.outcomes) {
      const state = nextState(recipient, outcome, now);
      const moved = await trx('email_recipients').where({ id: recipient.id, leased_until: ctx.lease }).update({
        ...state.columns, attempts: trx.raw('attempts + 1'), leased_until: null, mx_host: attempt.mxHost, updated_at: now,
      });
      if (moved === 0) {
        // Another job took over after our lease ran out: it owns the recipient's state now.
        deps.log.warn({ emailId: email.id, recipient: recipient.address }, 'delivery.lease_lost');
        continue;
      }
      const suppressedMessage = outcome.simulated
        ? `${recipient.address} is a simulator address that behaves as if on the suppression list.`
        : `${recipient.address} is on the team's suppression list.`;
      applied.push({ address: recipient.address, state, suppressedMessage });
    }
    const attempted = applied.filter((a) => a.state.attempt !== null);
    if (attempted.length) {
      const kinds = [...new Set(attempted.map((a) => a.state.attempt))];
      await trx('delivery_attempts').insert({
        id: newId(), email_id: email.id, team_id: email.team_id, domain: attempt.domain, recipients: attempted.map((a) => a.address),
        mx_host: attempt.mxHost, outcome: kinds.length === 1 ? kinds[0] : 'partial', response: attempted[0].state.columns.last_response,
        transcript: attempt.transcript, tls: attempt.tls, duration_ms: attempt.durationMs, started_at: attempt.startedAt,
      });
    }
    await recordEvents(trx, email, applied);
    for (const a of applied) {
      // An address the suppression list cannot hold (no dot in its domain) bounced all the same.
      if (a.state.suppress && addressProblem(a.address) === null) {
        await addSuppression(trx, email.team_id, { email: a.address, origin: 'bounce', source_id: email.id });
      }
    }
    await refreshEmail(trx, email.id, now, applied.some((a) => a.state.events.includes('complained')));
  });
}
