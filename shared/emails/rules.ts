// Who may send what to whom (CONTRACT, Sending): the sender's domain, a bound key's domain, the sandbox and the
// managed domain's narrow reach, the bulk rule and the send quotas. Each refusal is a ServiceError.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { ServiceError } from '../errors.ts';
import { reviveDates } from './sql.ts';
import { prepared } from '../db/prepared.ts';
import type { DomainRow } from '../domains/store.ts';
import { sendingRecordsVerified, type SendingRecord } from '../domains/status.ts';
import type { TeamRow } from '../teams/teams.ts';
import type { ApiKeyRow } from '../api-keys/keys.ts';
import { identitiesOf } from '../teams/identities.ts';

interface SenderDomain {
  domain: DomainRow;
  sending_records: SendingRecord[];
  signing_selectors: string[];
}

function checkSenderDomain(
  found: SenderDomain | undefined,
  key: Pick<ApiKeyRow, 'domain_id'> | null,
  domainName: string,
): DomainRow {
  const notVerified = () =>
    new ServiceError(
      'validation_error',
      `The ${domainName} domain is not verified. Add and verify it on the domains page (POST /domains).`,
      { status: 403 },
    );
  if (!found) throw notVerified();
  const { domain } = found;
  // Before the records: a domain that may not send says so, whatever its records say.
  if (domain.sending !== 'enabled') {
    throw new ServiceError('validation_error', `Sending is disabled for the ${domainName} domain.`, { status: 403 });
  }
  if (!sendingRecordsVerified(domain, found.sending_records, found.signing_selectors)) throw notVerified();
  if (key?.domain_id && key.domain_id !== domain.id) {
    throw new ServiceError(
      'validation_error',
      `This API key may only send from its own domain, not from ${domainName}.`,
      { status: 403 },
    );
  }
  return domain;
}

/** The sender's domain, checked as senderLookups checks it. */
export async function senderDomain(
  db: Knex,
  team: Pick<TeamRow, 'id'>,
  key: Pick<ApiKeyRow, 'domain_id'> | null,
  domainName: string,
): Promise<DomainRow> {
  return (await senderLookups(db, team, key, domainName, [])).domain;
}

export interface SenderLookups {
  domain: DomainRow;
  /** The team's own suppressions among the addresses: address → origin. */
  suppressed: Map<string, string>;
  /** Addresses that hard-bounced for any team (the platform-wide list, recipient-checks.ts `dead_address`). */
  dead: Set<string>;
}

// A prepared statement: it runs on every send (building it with knex cost more than running it). Its name changes
// whenever its text does (shared/db/prepared.ts). A verified domain needs no record of its own read (the common
// case costs nothing more); a partly verified one is decided by its sending records.
const DOMAIN_DATES = [
  'created_at',
  'updated_at',
  'checking_since',
  'last_checked_at',
  'next_check_at',
  'verified_at',
] as const;
const SENDER_LOOKUPS_SQL = `select row_to_json(d.*) as domain, (select coalesce(json_agg(json_build_object('email', s.email, 'origin', s.origin, 'own', s.team_id = d.team_id)), '[]'::json)
  from suppressions s where s.email = any(?::text[]) and (s.team_id = d.team_id or s.origin = 'bounce')) as suppression_hits,
  case when d.status = 'verified' then '[]'::json else (select coalesce(json_agg(json_build_object('record', r.record, 'name', r.name, 'type', r.type, 'status', r.status)), '[]'::json)
  from domain_records r where r.domain_id = d.id and r.record in ('SPF', 'DKIM')) end as sending_records,
  case when d.status = 'verified' then '[]'::json else (select coalesce(json_agg(k.selector), '[]'::json) from dkim_keys k where k.domain_id = d.id and k.status = 'active') end as signing_selectors
  from domains d where d.team_id = ?::uuid and d.name = ? limit 1`;

/**
 * The sender's domain (may it send: sending enabled, its sending records verified) and, in the same query, what
 * the suppression lists say of `addresses` (lower case): the team's own entries and the platform-wide hard
 * bounces. One round trip where a send used to make three.
 */
export async function senderLookups(
  db: Knex,
  team: Pick<TeamRow, 'id'>,
  key: Pick<ApiKeyRow, 'domain_id'> | null,
  domainName: string,
  addresses: string[],
): Promise<SenderLookups> {
  const [row] = await prepared<SenderDomain & { suppression_hits: { email: string; origin: string; own: boolean }[] }>(
    db,
    'pw_sender_lookups_v3',
    SENDER_LOOKUPS_SQL,
    [addresses, team.id, domainName],
  );
  const hits = row?.suppression_hits ?? [];
  const checked = checkSenderDomain(
    row ? { ...row, domain: reviveDates(row.domain, DOMAIN_DATES) } : undefined,
    key,
    domainName,
  );
  return {
    domain: checked,
    suppressed: new Map(hits.filter((h) => h.own).map((h) => [h.email, h.origin])),
    dead: new Set(hits.filter((h) => h.origin === 'bounce').map((h) => h.email)),
  };
}

export interface ReachContext {
  simulatorDomain: string;
  identities: Set<string>;
  verifiedDomains: Set<string>;
}

export async function reachContext(db: Knex, teamId: string, simulatorDomain: string): Promise<ReachContext> {
  const [identities, domains] = await Promise.all([
    // The operator's registrations and the members' verified addresses (shared/teams/identities.ts).
    identitiesOf(db, teamId),
    db('domains').where({ team_id: teamId, status: 'verified', managed: false }).pluck('name'),
  ]);
  return { simulatorDomain, identities: new Set(identities), verifiedDomains: new Set(domains) };
}

/**
 * The sandbox (a region still in `sending.sandbox_regions`) and the managed domain reach only the team's
 * verified identities, the simulator and (sandbox only) addresses at the team's own verified domains.
 */
export function reachIsLimited(team: Pick<TeamRow, 'sandbox_regions'>, domain: DomainRow): boolean {
  return domain.managed || team.sandbox_regions.includes(domain.region);
}

export function checkReach(
  team: Pick<TeamRow, 'sandbox_regions'>,
  domain: DomainRow,
  recipients: { address: string; domain: string }[],
  reach: ReachContext,
): void {
  if (!reachIsLimited(team, domain)) return;
  for (const r of recipients) {
    if (r.domain === reach.simulatorDomain || reach.identities.has(r.address)) continue;
    if (!domain.managed && reach.verifiedDomains.has(r.domain)) continue;
    const allowed = domain.managed
      ? ['verified_identity', 'simulator']
      : ['verified_identity', 'verified_domain', 'simulator'];
    const why = domain.managed
      ? `The managed domain ${domain.name} can only send to verified addresses of your team and to the simulator.`
      : `The ${domain.region} region of this team is still in the sending sandbox: it can only send to verified addresses of your team, your verified domains and the simulator.`;
    throw new ServiceError('validation_error', `${why} ${r.address} is none of these.`, {
      status: 403,
      details: { recipient: r.address, region: domain.region, allowed },
    });
  }
}

export async function checkQuota(
  db: Knex,
  team: Pick<TeamRow, 'id'> & { daily_send_limit?: number | null; monthly_send_limit?: number | null },
  adding: number,
  now: Date,
): Promise<void> {
  const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  if (team.daily_send_limit != null) {
    const [{ n }] = await db('emails')
      .where({ team_id: team.id })
      .where('created_at', '>=', dayStart)
      .count({ n: '*' });
    if (Number(n) + adding > team.daily_send_limit) {
      throw new ServiceError(
        'daily_quota_exceeded',
        `You have reached your daily sending quota of ${team.daily_send_limit} emails. It resets at 00:00 UTC.`,
      );
    }
  }
  if (team.monthly_send_limit != null) {
    const [{ n }] = await db('emails')
      .where({ team_id: team.id })
      .where('created_at', '>=', monthStart)
      .count({ n: '*' });
    if (Number(n) + adding > team.monthly_send_limit) {
      throw new ServiceError(
        'monthly_quota_exceeded',
        `You have reached your monthly sending quota of ${team.monthly_send_limit} emails.`,
      );
    }
  }
}

export function contentHash(from: string, subject: string, html: string | null, text: string | null): string {
  return createHash('sha256')
    .update(`${from}\n${subject}\n${html ?? ''}\n${text ?? ''}`)
    .digest('hex');
}

/**
 * The refusal of the bulk rule: the day's count for this content would pass `limit` (the accept statement decides
 * it, email-statement.ts).
 */
export function bulkRefusal(limit: number, docsUrl: string): ServiceError {
  return new ServiceError(
    'validation_error',
    `This message has reached ${limit} people today without an unsubscribe link. Add one (or a List-Unsubscribe header) to keep sending it.`,
    {
      details: { reason: 'bulk_requires_unsubscribe', docs_url: docsUrl },
    },
  );
}
