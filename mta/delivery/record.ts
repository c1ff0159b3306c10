// The record stage: one transaction per attempt outcome. It moves the recipients (only those this job still
// holds the lease of), writes the delivery_attempts row with its transcript, records the events, adds the
// suppressions of hard bounces, and recomputes the email's last_event and status. A crash before the commit
// leaves the lease to expire and the sweep to try again; after it, everything is known at once.
import type { Knex } from 'knex';
import type { Logger } from '../../shared/logger.ts';
import { eventRow, insertEvents, type EventRow, type EventType } from '../../shared/events.ts';
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
function eventRows(email: EmailRow, applied: Applied[]): EventRow[] {
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
  return [...groups.values()].map((g) => eventRow(email.team_id, g.type, emailEventData(email, { to: g.to, ...g.extra })));
}

type RecipientState = { id: string; status: string; delay_notified: boolean; moved: boolean };

/**
 * Moves this job's recipients, each only if it still holds the lease, in one statement that also answers every
 * recipient of the email as it now is (the outer select reads the rows as they were before the statement, so a
 * moved one takes its new state from the update's RETURNING).
 */
async function moveRecipients(trx: Knex, ctx: RecordContext, attempt: Attempt, states: NextState[]): Promise<RecipientState[]> {
  let q = trx.queryBuilder();
  attempt.outcomes.forEach(({ recipient }, i) => {
    q = q.with(`m${i}`, trx('email_recipients').where({ id: recipient.id, leased_until: ctx.lease }).update({
      ...states[i].columns, attempts: trx.raw('attempts + 1'), leased_until: null, mx_host: attempt.mxHost, updated_at: ctx.now,
    }).returning(['id', 'status', 'delay_notified']));
  });
  const moved = attempt.outcomes.map((_, i) => `select * from m${i}`).join(' union all ');
  return q.with('moved', trx.raw(moved))
    .from('email_recipients as r').leftJoin('moved as m', 'm.id', 'r.id').where('r.email_id', ctx.email.id)
    .select('r.id', trx.raw('coalesce(m.status, r.status) as status'), trx.raw('coalesce(m.delay_notified, r.delay_notified) as delay_notified'),
      trx.raw('m.id is not null as moved'));
}

/**
 * The attempt as one transaction of four statements: lock the email (one writer per email at a time, so
 * concurrent domain groups each see the others' results), move the recipients and read them all back, add the
 * suppressions of hard bounces (rare), then write the attempt row and the events and refresh the email's
 * last_event and status in one statement.
 */
export async function recordAttempt(deps: { db: Knex; log: Logger }, ctx: RecordContext, attempt: Attempt): Promise<void> {
  const { email, now } = ctx;
  await deps.db.transaction(async (trx) => {
    const locked: { last_event: string; status: string } = await trx('emails').where({ id: email.id }).forUpdate().first('last_event', 'status');
    const states = attempt.outcomes.map(({ recipient, outcome }) => nextState(recipient, outcome, now));
    const recipients = attempt.outcomes.length ? await moveRecipients(trx, ctx, attempt, states) : [];
    const moved = new Set(recipients.filter((r) => r.moved).map((r) => r.id));
    const applied: Applied[] = [];
    attempt.outcomes.forEach(({ recipient, outcome }, i) => {
      if (!moved.has(recipient.id)) {
        // Another job took over after our lease ran out: it owns the recipient's state now.
        deps.log.warn({ emailId: email.id, recipient: recipient.address }, 'delivery.lease_lost');
        return;
      }
      const suppressedMessage = outcome.simulated
        ? `${recipient.address} is a simulator address that behaves as if on the suppression list.`
        : `${recipient.address} is on the team's suppression list.`;
      applied.push({ address: recipient.address, state: states[i], suppressedMessage });
    });
    for (const a of applied) {
      // An address the suppression list cannot hold (no dot in its domain) bounced all the same.
      if (a.state.suppress && addressProblem(a.address) === null) {
        await addSuppression(trx, email.team_id, { email: a.address, origin: 'bounce', source_id: email.id });
      }
    }
    // last_event and status from the recipients as they now are (state.ts explains the order).
    const complained = applied.some((a) => a.state.events.includes('complained'));
    const pending = recipients.some((r) => r.status === 'queued' || r.status === 'deferred');
    let q = trx('emails').where({ id: email.id });
    const attempted = applied.filter((a) => a.state.attempt !== null);
    if (attempted.length) {
      const kinds = [...new Set(attempted.map((a) => a.state.attempt))];
      q = q.with('attempt', trx('delivery_attempts').insert({
        id: newId(), email_id: email.id, team_id: email.team_id, domain: attempt.domain, recipients: attempted.map((a) => a.address),
        mx_host: attempt.mxHost, outcome: kinds.length === 1 ? kinds[0] : 'partial', response: attempted[0].state.columns.last_response,
        transcript: attempt.transcript, tls: attempt.tls, duration_ms: attempt.durationMs, started_at: attempt.startedAt,
      }));
    }
    const events = eventRows(email, applied);
    if (events.length) q = q.with('recorded_events', insertEvents(trx, events));
    await q.update({
      last_event: lastEvent(complained ? 'complained' : locked.last_event, recipients),
      status: pending ? locked.status : 'done',
      updated_at: now,
    });
  });
}
