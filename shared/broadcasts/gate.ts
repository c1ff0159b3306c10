// The send gate: what POST /broadcasts/{id}/send (or a create with `send: true`) checks before a broadcast may go,
// all under the broadcast's row lock, then one conditional move out of `draft` — so of two sends at once exactly one
// starts and the other is told the broadcast is no longer a draft. Refusals, in order: a schedule the grammar does not
// cover, in the past or beyond 30 days; a deleted segment or topic, an empty segment, no body (422 validation_error);
// an unverified sender domain, a region still in the sandbox or a managed domain (403, as for any send); a failing
// pre-send check without `acknowledge_checks` (422 with `details.checks`); the team's monthly marketing allowance
// (429 marketing_quota_exceeded).
import type { Knex } from 'knex';
import { ServiceError } from '../errors.ts';
import { parseScheduledAt, ScheduleError } from '../emails/schedule-phrase.ts';
import { reachIsLimited, senderDomain } from '../emails/rules.ts';
import { campaignRefusal, runChecks } from '../checks/run.ts';
import { countMembers } from '../segments/membership.ts';
import type { SegmentRow } from '../segments/segments.ts';
import type { TeamRow } from '../teams/teams.ts';
import { checkSegment, checkTopic, fieldError, fromDomain } from './content.ts';
import { mergeContext } from './fanout-rows.ts';
import { documentFacts, pointAtBlocks } from './document.ts';
import { compileMerge, renderMerge, unresolvedNames, withPreview, type MergeContext } from './merge.ts';
import { wrongStatus, type BroadcastRow } from './store.ts';

export interface SendOptions {
  scheduled_at?: string | null;
  acknowledge_checks?: boolean;
}

function readSchedule(value: string | null | undefined, now: Date): Date | null {
  if (!value) return null;
  try {
    return parseScheduledAt(value, now);
  } catch (err) {
    if (err instanceof ScheduleError) throw fieldError('scheduled_at', `\`${value}\` ${err.message}.`);
    throw err;
  }
}

/** The content as a recipient with no values would see it: what the checks read. */
function sample(row: BroadcastRow, ctx: MergeContext) {
  const blank = { email: '', first_name: null, last_name: null, properties: {} };
  const render = (s: string | null, html: boolean) =>
    s === null ? null : renderMerge(compileMerge(s), blank, '{{{RESEND_UNSUBSCRIBE_URL}}}', ctx, html);
  const html = render(row.html, true);
  return {
    subject: render(row.subject, false),
    // The preview text goes in front of the body as a hidden preheader (fanout-rows.ts): the checks see it so.
    html: html === null ? null : withPreview(html, row.preview_text),
    text: render(row.text, false),
    listUnsubscribe: true,
    missingVariables: unresolvedNames([row.subject, row.html, row.text, row.preview_text], ctx),
    blocks: row.document ? documentFacts(row.document, ctx) : undefined,
  };
}

/**
 * Copies the month's broadcasts still have to reach: for each queued, scheduled (within the month) or sending one, what
 * its send reserved less what its fan-out has already handed over or left out.
 */
async function pendingThisMonth(trx: Knex, teamId: string, month: Date, next: Date, now: Date): Promise<number> {
  const [{ pending }] = await trx('broadcasts')
    .where({ team_id: teamId })
    .whereIn('status', ['queued', 'scheduled', 'sending'])
    // Its month: when it is scheduled for, else now (queued and sending ones go out now).
    .whereRaw('coalesce(scheduled_at, ?) >= ? and coalesce(scheduled_at, ?) < ?', [now, month, now, next])
    .sum({ pending: trx.raw('greatest(0, coalesce(audience_reserved, 0) - recipients_count - suppressed_count)') });
  return Number(pending ?? 0);
}

async function checkAllowance(
  trx: Knex,
  team: Pick<TeamRow, 'id'>,
  audience: number,
  now: Date,
  scheduledAt: Date | null,
): Promise<void> {
  const limits = await trx('teams').where({ id: team.id }).forUpdate().first('marketing_monthly_limit');
  const limit: number | null = limits?.marketing_monthly_limit ?? null;
  if (limit === null) return;
  // The month the copies go out in (a broadcast scheduled for next month is counted in next month).
  const at = scheduledAt && scheduledAt > now ? scheduledAt : now;
  const month = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const next = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  // What this month's broadcasts reached, and what those accepted but not yet fanned out hold (the team's row lock
  // above orders concurrent sends, so the second sees the first's reservation).
  const [{ sent }] = await trx('broadcast_recipients as r')
    .join('broadcasts as b', 'b.id', 'r.broadcast_id')
    .where({ 'b.team_id': team.id, 'r.status': 'sent' })
    .where('r.created_at', '>=', month)
    .where('r.created_at', '<', next)
    .count({ sent: '*' });
  const used = Number(sent) + (await pendingThisMonth(trx, team.id, month, next, now));
  if (used + audience <= limit) return;
  throw new ServiceError(
    'marketing_quota_exceeded',
    `This broadcast's segment has ${audience} members and the team has ${Math.max(0, limit - used)} of its ${limit} monthly marketing sends left (broadcasts already queued count).`,
    { details: { limit, used, audience } },
  );
}

/**
 * Moves a draft to `queued` (or `scheduled`) once every check passes, in `trx` (the caller's transaction: a create
 * with `send: true` writes nothing when the send is refused). Answers the moved row.
 */
export async function sendBroadcast(
  trx: Knex.Transaction,
  team: Pick<TeamRow, 'id' | 'sandbox_regions'>,
  id: string,
  options: SendOptions,
  now: Date,
): Promise<BroadcastRow> {
  const row: BroadcastRow | undefined = await trx('broadcasts').where({ team_id: team.id, id }).forUpdate().first();
  if (!row) throw new ServiceError('not_found', 'Broadcast not found.');
  if (row.status !== 'draft') throw wrongStatus(row, 'sent', 'a draft');
  const scheduledAt = readSchedule(options.scheduled_at, now);
  if (!row.segment_id) throw fieldError('segment_id', 'the broadcast names no segment.');
  await checkSegment(trx, team.id, row.segment_id);
  if (row.topic_id) await checkTopic(trx, team.id, row.topic_id);
  if (!row.html && !row.text) throw fieldError('html', 'a broadcast needs `html` or `text` to send.');
  const segment: SegmentRow = await trx('segments').where({ id: row.segment_id }).first();
  const audience = await countMembers(trx, segment);
  if (audience === 0) throw fieldError('segment_id', 'the segment has no members: there is nobody to send to.');
  const domain = await senderDomain(trx, team, null, fromDomain(row.from));
  // A broadcast reaches whoever its segment holds: not from the sandbox or a managed domain (which reach only the
  // team's own addresses), where a segment is no audience to send to.
  if (reachIsLimited(team, domain))
    throw new ServiceError(
      'validation_error',
      domain.managed
        ? `The managed domain ${domain.name} cannot send broadcasts: send from a domain of your own.`
        : `The ${domain.region} region of this team is still in the sending sandbox: broadcasts are sent once it is lifted.`,
      { status: 403, details: { region: domain.region } },
    );
  const ctx = await mergeContext(trx, team.id);
  if (!options.acknowledge_checks) {
    const checks = await runChecks(sample(row, ctx), null);
    const refusal = campaignRefusal(row.document ? pointAtBlocks(checks, row.document, ctx) : checks);
    if (refusal) throw refusal;
  }
  await checkAllowance(trx, team, audience, now, scheduledAt);
  const scheduled = scheduledAt !== null && scheduledAt.getTime() > now.getTime();
  const [moved] = await trx<BroadcastRow>('broadcasts')
    .where({ id, status: 'draft' })
    .update({
      status: scheduled ? 'scheduled' : 'queued',
      scheduled_at: scheduled ? scheduledAt : null,
      audience_reserved: audience,
      updated_at: now,
    })
    .returning('*');
  return moved;
}
