// The record stage: the outcomes of attempts written in one transaction. It moves the recipients (only those
// their job still holds the lease of), writes the delivery_attempts rows with their transcripts, records the
// events, notes each delivered address's activity (contact_activity, for the segment filters), adds the
// suppressions of hard bounces, and recomputes each email's last_event and status. Several
// attempts (of any emails) can share the transaction: group-commit.ts batches the ones that arrive while the
// previous transaction is committing; a lone attempt at a one-recipient email is one statement instead
// (recordSole). A crash before the commit leaves the leases to expire and the sweep to try again; after it,
// everything is known at once.
import type { Knex } from 'knex';
import type { Logger } from '../../shared/logger.ts';
import { eventRow, type EventRow, type EventType } from '../../shared/events.ts';
import { newId } from '../../shared/ids.ts';
import { emailEventData, type EmailRow } from '../../shared/emails/present.ts';
import { addSuppression, addressProblem } from '../../shared/suppressions/suppressions.ts';
import { prepared } from '../../shared/db/prepared.ts';
import { activityParameter, activityUpsert, type Activity } from '../../shared/contacts/activity.ts';
import { nextState, type NextState } from './state.ts';
import {
  emailState,
  isPending,
  lastEvent,
  lastEventByCurrent,
  type EmailState,
} from '../../shared/emails/last-event.ts';
import type { Attempt, LeasedRecipient } from './types.ts';

export interface RecordContext {
  email: EmailRow;
  /** The job's lease token (email_recipients.leased_until as it wrote it). */
  lease: string;
  now: Date;
}

interface Applied {
  address: string;
  state: NextState;
  /** email.suppressed's `suppressed`, for a suppressed recipient. */
  suppressed?: Record<string, unknown>;
}

function eventExtra(event: string, a: Applied): Record<string, unknown> {
  if (event === 'bounced') return { bounce: a.state.bounce };
  if (event === 'failed') return { failed: a.state.failed };
  if (event === 'suppressed') return { suppressed: a.suppressed };
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
  return [...groups.values()].map((g) =>
    eventRow(email.team_id, g.type, emailEventData(email, { to: g.to, ...g.extra })),
  );
}

export interface PendingRecord {
  ctx: RecordContext;
  attempt: Attempt;
}

/** A recipient's state as a record wrote it (only recipients whose lease the job still held are written). */
export interface Recorded {
  recipient: LeasedRecipient;
  status: NextState['columns']['status'];
  response: string;
}

/** The outcomes of `record` that were written: those of the recipients `moved` says moved. */
const recordedOf = (record: PendingRecord, states: NextState[], moved: (id: string) => boolean): Recorded[] =>
  record.attempt.outcomes.flatMap(({ recipient }, j) =>
    moved(recipient.id)
      ? [{ recipient, status: states[j].columns.status, response: states[j].columns.last_response }]
      : [],
  );

interface RecipientState {
  id: string;
  email_id: string;
  status: string;
  delay_notified: boolean;
  moved: boolean;
}

/** Each outcome's recipient row as the move statement takes it (MOVE_SQL's `v`). */
function moveRows(records: PendingRecord[], states: NextState[][]) {
  return records.flatMap(({ ctx, attempt }, i) =>
    attempt.outcomes.map(({ recipient }, j) => {
      const c = states[i][j].columns;
      return {
        id: recipient.id,
        lease: ctx.lease,
        status: c.status,
        last_response: c.last_response,
        enhanced_code: c.enhanced_code,
        next_attempt_at: c.next_attempt_at,
        first_deferred_at: c.first_deferred_at ?? null,
        delay_notified: c.delay_notified ?? null,
        delivered_at: c.delivered_at ?? null,
        bounce_type: c.bounce_type ?? null,
        bounce_sub_type: c.bounce_sub_type ?? null,
        mx_host: attempt.mxHost,
        now: ctx.now,
      };
    }),
  );
}

/**
 * The move of the recipients (a CTE `moved`), each only if it still holds its job's lease. Columns a state leaves
 * out (first_deferred_at, delay_notified, delivered_at, the bounce type) keep their value. One parameter: moveRows.
 */
const MOVE_SQL = `moved as (
      update email_recipients r set status = v.status, last_response = v.last_response, enhanced_code = v.enhanced_code,
        next_attempt_at = v.next_attempt_at, first_deferred_at = coalesce(v.first_deferred_at, r.first_deferred_at),
        delay_notified = coalesce(v.delay_notified, r.delay_notified), delivered_at = coalesce(v.delivered_at, r.delivered_at),
        bounce_type = coalesce(v.bounce_type, r.bounce_type), bounce_sub_type = coalesce(v.bounce_sub_type, r.bounce_sub_type),
        attempts = r.attempts + 1, leased_until = null, mx_host = v.mx_host, updated_at = v.now
      from jsonb_to_recordset(?::jsonb) as v(id uuid, lease timestamptz, status text, last_response text, enhanced_code text,
        next_attempt_at timestamptz, first_deferred_at timestamptz, delay_notified boolean, delivered_at timestamptz,
        bounce_type text, bounce_sub_type text, mx_host text, now timestamptz)
      where r.id = v.id and r.leased_until = v.lease
      returning r.id, r.status, r.delay_notified)`;

/**
 * The attempt rows and the events (CTEs `attempt`, `recorded_events`), each taking one parameter; `where` may hold them
 * back.
 */
const attemptsSql = (where = '') => `attempt as (
        insert into delivery_attempts (id, email_id, team_id, domain, recipients, mx_host, outcome, response, transcript, tls, duration_ms, started_at)
        select * from jsonb_to_recordset(?::jsonb) as a(id uuid, email_id uuid, team_id uuid, domain text, recipients text[], mx_host text,
          outcome text, response text, transcript text, tls boolean, duration_ms integer, started_at timestamptz)${where})`;
const eventsSql = (where = '') => `recorded_events as (
        insert into events (id, team_id, type, data)
        select id, team_id, type, data::jsonb from jsonb_to_recordset(?::jsonb) as e(id uuid, team_id uuid, type text, data text)${where})`;

/**
 * Moves the recipients of every record and answers every recipient of the emails concerned as it now is (the
 * outer select reads the rows as they were before the statement, so a moved one takes its new state from the
 * update's RETURNING).
 */
async function moveRecipients(
  trx: Knex,
  records: PendingRecord[],
  states: NextState[][],
  emailIds: string[],
): Promise<RecipientState[]> {
  return prepared<RecipientState>(
    trx,
    'mta_record_move',
    `
    with ${MOVE_SQL}
    select r.id, r.email_id, coalesce(m.status, r.status) as status, coalesce(m.delay_notified, r.delay_notified) as delay_notified,
      m.id is not null as moved
    from email_recipients r left join moved m on m.id = r.id
    where r.email_id = any(?::uuid[])`,
    [JSON.stringify(moveRows(records, states)), emailIds],
  );
}

function attemptRow(record: PendingRecord, attempted: Applied[]) {
  const {
    ctx: { email },
    attempt,
  } = record;
  const kinds = [...new Set(attempted.map((a) => a.state.attempt))];
  return {
    id: newId(),
    email_id: email.id,
    team_id: email.team_id,
    domain: attempt.domain,
    recipients: attempted.map((a) => a.address),
    mx_host: attempt.mxHost,
    outcome: kinds.length === 1 ? kinds[0] : 'partial',
    response: attempted[0].state.columns.last_response,
    transcript: attempt.transcript,
    tls: attempt.tls,
    duration_ms: attempt.durationMs,
    started_at: attempt.startedAt,
  };
}

/** What a record applies: the outcomes of the recipients that moved (the others were taken over by another job). */
function appliedOf(log: Logger, record: PendingRecord, states: NextState[], moved: (id: string) => boolean): Applied[] {
  const applied: Applied[] = [];
  record.attempt.outcomes.forEach(({ recipient, outcome }, j) => {
    if (!moved(recipient.id)) {
      // Another job took over after our lease ran out: it owns the recipient's state now.
      log.warn({ emailId: record.ctx.email.id, recipient: recipient.address }, 'delivery.lease_lost');
      return;
    }
    const suppressed = outcome.suppressed ?? {
      type: 'OnAccountSuppressionList',
      reason: 'previous_bounce',
      message: outcome.simulated
        ? `${recipient.address} is a simulator address that behaves as if on the suppression list.`
        : `${recipient.address} is on the team's suppression list.`,
      diagnosticCode: [],
    };
    applied.push({
      address: recipient.address,
      state: states[j],
      ...(outcome.action === 'suppress' ? { suppressed } : {}),
    });
  });
  return applied;
}

/** The addresses a record delivered to, for contact_activity (the segment filter's `received`). */
const deliveredActivity = (record: PendingRecord, applied: Applied[]): Activity[] =>
  applied
    .filter((a) => a.state.columns.status === 'delivered')
    .map((a) => ({ teamId: record.ctx.email.team_id, address: a.address, kind: 'delivered', at: record.ctx.now }));

const statesOf = (records: PendingRecord[]) =>
  records.map(({ ctx, attempt }) =>
    attempt.outcomes.map(({ recipient, outcome }) => nextState(recipient, outcome, ctx.now)),
  );

/**
 * The records as one transaction, however many: lock their emails (in id order, so two transactions never wait
 * on each other in a circle; one writer per email at a time, so concurrent domain groups each see the others'
 * results), move the recipients and read them all back, add the suppressions of hard bounces (rare), then write
 * the attempt rows and the events and refresh each email's last_event and status in one statement. A lone record
 * of a one-recipient email takes one statement instead (recordSole). Answers, for each record, what it wrote.
 */
export async function recordAttempts(deps: { db: Knex; log: Logger }, records: PendingRecord[]): Promise<Recorded[][]> {
  const states = statesOf(records);
  if (records.length === 1 && isSole(records[0], states[0])) return [await recordSole(deps, records[0], states[0])];
  const emailIds = [...new Set(records.map((r) => r.ctx.email.id))].sort();
  const moved = new Set<string>();
  await deps.db.transaction(async (trx) => {
    const locked = await prepared<{ id: string } & EmailState>(
      trx,
      'mta_record_lock',
      'select id, last_event, status from emails where id = any($1::uuid[]) order by id for update',
      [emailIds],
    );
    const recipients = records.some((r) => r.attempt.outcomes.length)
      ? await moveRecipients(trx, records, states, emailIds)
      : [];
    for (const r of recipients) if (r.moved) moved.add(r.id);
    const attempts = [];
    const events: EventRow[] = [];
    const activity: Activity[] = [];
    const complained = new Set<string>();
    for (const [i, record] of records.entries()) {
      const { email } = record.ctx;
      const applied = appliedOf(deps.log, record, states[i], (id) => moved.has(id));
      activity.push(...deliveredActivity(record, applied));
      for (const a of applied) {
        // An address the suppression list cannot hold (no dot in its domain) bounced all the same.
        if (a.state.suppress && addressProblem(a.address) === null) {
          await addSuppression(trx, email.team_id, { email: a.address, origin: 'bounce', source_id: email.id });
        }
      }
      if (applied.some((a) => a.state.events.includes('complained'))) complained.add(email.id);
      const attempted = applied.filter((a) => a.state.attempt !== null);
      if (attempted.length) attempts.push(attemptRow(record, attempted));
      events.push(...eventRows(email, applied));
    }
    // last_event and status from the recipients as they now are (state.ts explains the order).
    const byEmail = new Map<string, RecipientState[]>();
    for (const r of recipients) byEmail.set(r.email_id, [...(byEmail.get(r.email_id) ?? []), r]);
    const nowOf = new Map(records.map((r) => [r.ctx.email.id, r.ctx.now]));
    const emails = locked.map((e) => ({
      id: e.id,
      ...emailState(e, byEmail.get(e.id) ?? [], complained.has(e.id)),
      now: nowOf.get(e.id)!,
    }));
    // The events' insert only when there are some (and the activity's): no statement for nothing.
    const ctes = [attemptsSql()];
    const bindings = [JSON.stringify(attempts)];
    if (events.length) {
      ctes.push(eventsSql());
      bindings.push(JSON.stringify(events));
    }
    if (activity.length) {
      ctes.push(`activity as (${activityUpsert()})`);
      bindings.push(activityParameter(activity));
    }
    await prepared(
      trx,
      `mta_record_write${events.length ? '_events' : ''}${activity.length ? '_activity' : ''}`,
      `with ${ctes.join(', ')}
      update emails set last_event = v.last_event, status = v.status, updated_at = v.now
      from jsonb_to_recordset(?::jsonb) as v(id uuid, last_event text, status text, now timestamptz)
      where emails.id = v.id`,
      [...bindings, JSON.stringify(emails)],
    );
  });
  return records.map((record, i) => recordedOf(record, states[i], (id) => moved.has(id)));
}

/**
 * A record the one-statement path can write: its email has one recipient (every recipient row comes from to, cc
 * or bcc, so one address there is at most one row; no other job or domain group writes its recipients, nothing
 * to lock against), and the outcome adds no suppression and no complaint (those take the transaction).
 */
function isSole(record: PendingRecord, states: NextState[]): boolean {
  const { email } = record.ctx;
  return (
    email.to.length + email.cc.length + email.bcc.length === 1 &&
    record.attempt.outcomes.length === 1 &&
    !states[0].suppress &&
    !states[0].events.includes('complained')
  );
}

/**
 * The record of a one-recipient email as one statement, committed on its own: the recipient moves if it still
 * holds the lease, and only then are the attempt and the events written and the email refreshed: its state as
 * emailState has it for its one recipient, looked up by the email's current last_event (lastEventByCurrent), as
 * the statement does not read the email first.
 */
async function recordSole(
  deps: { db: Knex; log: Logger },
  record: PendingRecord,
  states: NextState[],
): Promise<Recorded[]> {
  const { email, now } = record.ctx;
  const state = states[0];
  // Written only if the recipient moves (the statement's conditions), so taken as moved here.
  const applied = appliedOf(deps.log, record, states, () => true);
  const attempted = applied.filter((a) => a.state.attempt !== null);
  const events = eventRows(email, applied);
  const recipient = { status: state.columns.status, delay_notified: state.columns.delay_notified ?? false };
  const ctes = [MOVE_SQL, attemptsSql(' where exists (select 1 from moved)')];
  const bindings: unknown[] = [
    JSON.stringify(moveRows([record], [states])),
    JSON.stringify(attempted.length ? [attemptRow(record, attempted)] : []),
  ];
  if (events.length) {
    ctes.push(eventsSql(' where exists (select 1 from moved)'));
    bindings.push(JSON.stringify(events));
  }
  const activity = deliveredActivity(record, applied);
  if (activity.length) {
    ctes.push(`activity as (${activityUpsert(' where exists (select 1 from moved)')})`);
    bindings.push(activityParameter(activity));
  }
  const [{ moved }] = await prepared<{ moved: number }>(
    deps.db,
    `mta_record_sole${events.length ? '_events' : ''}${activity.length ? '_activity' : ''}`,
    `with ${ctes.join(', ')},
    refreshed as (update emails set
        last_event = coalesce(?::jsonb ->> last_event, ?), status = case when ?::boolean then status else 'done' end, updated_at = ?
      where id = ? and exists (select 1 from moved))
    select count(*)::int as moved from moved`,
    [
      ...bindings,
      JSON.stringify(lastEventByCurrent([recipient])),
      lastEvent('sent', [recipient]),
      isPending(recipient),
      now,
      email.id,
    ],
  );
  if (moved === 0) {
    // Another job took the recipient over after our lease ran out: it owns the recipient's state now.
    deps.log.warn(
      { emailId: email.id, recipient: record.attempt.outcomes[0].recipient.address },
      'delivery.lease_lost',
    );
    return [];
  }
  return recordedOf(record, states, () => true);
}
