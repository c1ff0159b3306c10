// The domains area's operations: create, update, delete, ask for verification. Each runs in one transaction
// and records its domain.* event in it.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import type { Region } from '../teams/teams.ts';
import { notFound, ServiceError } from '../errors.ts';
import { recordEvent } from '../events.ts';
import { takeKey, newSelector } from './dkim.ts';
import { normalizeDomainName, normalizeLabel } from './names.ts';
import type { ReservedTld } from './reserved.ts';
import { desiredRecords, type DomainSettings, type DomainTls, type PlatformHosts } from './records.ts';
import { decidesStatus, domainStatus } from './status.ts';
import { assertWritable, findDomain, publishedKeys, recordsOf, syncRecords, type DomainRow } from './store.ts';
import { domainEventData } from './present.ts';
import { logoUrlOf } from './brand-store.ts';
import { findReturnPathConflict, pickReturnPath, type ReturnPathResolver } from './return-path.ts';

export interface DomainContext {
  hosts: PlatformHosts;
  secrets: Buffer;
  resolver: ReturnPathResolver;
  /** RESERVED_TLDS_ALLOWED: names under these reserved TLDs may be added. */
  reservedAllowed: readonly ReservedTld[];
}

export interface CreateDomainInput {
  name: string;
  region?: Region;
  custom_return_path?: string;
  open_tracking?: boolean;
  click_tracking?: boolean;
  tracking_subdomain?: string;
  capabilities?: { sending?: 'enabled' | 'disabled'; receiving?: 'enabled' | 'disabled' };
  receiving_host?: string;
  tls?: DomainTls;
}

export type UpdateDomainInput = Omit<CreateDomainInput, 'name' | 'region'>;

const DEFAULT_TRACKING_SUBDOMAIN = 'links';

function settingsFrom(input: UpdateDomainInput, base: DomainSettings): DomainSettings {
  const s: DomainSettings = {
    custom_return_path:
      input.custom_return_path !== undefined
        ? normalizeLabel(input.custom_return_path, 'custom_return_path')
        : base.custom_return_path,
    open_tracking: input.open_tracking ?? base.open_tracking,
    click_tracking: input.click_tracking ?? base.click_tracking,
    tracking_subdomain:
      input.tracking_subdomain !== undefined
        ? normalizeLabel(input.tracking_subdomain, 'tracking_subdomain')
        : base.tracking_subdomain,
    sending: input.capabilities?.sending ?? base.sending,
    receiving: input.capabilities?.receiving ?? base.receiving,
    receiving_host:
      input.receiving_host === undefined || input.receiving_host === '@'
        ? (input.receiving_host ?? base.receiving_host)
        : normalizeLabel(input.receiving_host, 'receiving_host'),
    tls: input.tls ?? base.tls,
  };
  if (s.sending === 'disabled' && s.receiving === 'disabled') {
    throw new ServiceError('validation_error', 'At least one capability (sending or receiving) must be enabled.', {
      errors: [{ path: 'capabilities', message: 'sending and receiving cannot both be disabled' }],
    });
  }
  if ((s.open_tracking || s.click_tracking) && !s.tracking_subdomain) s.tracking_subdomain = DEFAULT_TRACKING_SUBDOMAIN;
  if (s.tracking_subdomain && s.tracking_subdomain === s.custom_return_path) {
    throw new ServiceError('validation_error', '`tracking_subdomain` and `custom_return_path` must differ.', {
      errors: [{ path: 'tracking_subdomain', message: 'same label as custom_return_path' }],
    });
  }
  return s;
}

async function refreshStatus(db: Knex, domain: DomainRow): Promise<DomainRow> {
  const records = await recordsOf(db, domain.id);
  // As verify.ts decides it: BIMI, a rotation's pending key and an Ed25519 key's record do not count.
  const keys = await publishedKeys(db, domain.id);
  const status = domainStatus(records.filter((r) => decidesStatus(r, keys)).map((r) => r.status));
  if (status === domain.status) return domain;
  const [row] = await db<DomainRow>('domains')
    .where({ id: domain.id })
    .update({ status, updated_at: new Date() })
    .returning('*');
  return row;
}

export async function createDomain(
  db: Knex,
  teamId: string,
  input: CreateDomainInput,
  ctx: DomainContext,
): Promise<DomainRow> {
  const name = normalizeDomainName(input.name, ctx.reservedAllowed);
  const defaults: DomainSettings = {
    custom_return_path: 'send',
    open_tracking: false,
    click_tracking: false,
    tracking_subdomain: null,
    sending: 'enabled',
    receiving: 'disabled',
    receiving_host: '@',
    tls: 'opportunistic',
  };
  const settings = settingsFrom(input, defaults);
  const mine = await db('domains').where({ team_id: teamId, name }).first('id');
  if (mine)
    throw new ServiceError('validation_error', `The domain ${name} has already been added to this team.`, {
      errors: [{ path: 'name', message: 'already added' }],
    });
  const elsewhere = await db('domains')
    .where({ name })
    .whereNot({ team_id: teamId })
    .where({ status: 'verified' })
    .first('id');
  if (elsewhere) {
    throw new ServiceError(
      'validation_error',
      `The domain ${name} is verified by another team. Prove control of it with POST /domains/claim.`,
      { claimable: true },
    );
  }
  if (input.custom_return_path === undefined && settings.sending === 'enabled') {
    settings.custom_return_path = await pickReturnPath(ctx.resolver, name, ctx.hosts, settings.tracking_subdomain);
  } else if (input.custom_return_path !== undefined) {
    await assertReturnPathFree(ctx, name, settings.custom_return_path, settings.tracking_subdomain);
  }

  const key = await takeKey(db, ctx.secrets);
  return db.transaction(async (trx) => {
    const now = new Date();
    const [domain] = await trx<DomainRow>('domains')
      .insert({
        id: newId(),
        team_id: teamId,
        name,
        region: input.region ?? 'us-east-1',
        ...settings,
        status: 'not_started',
        checking_since: now,
        next_check_at: now,
      })
      .returning('*');
    const selector = newSelector(now);
    await trx('dkim_keys').insert({
      id: newId(),
      team_id: teamId,
      domain_id: domain.id,
      selector,
      ...key,
      status: 'active',
      activated_at: now,
    });
    await syncRecords(trx, domain, desiredRecords(settings, await publishedKeys(trx, domain.id), ctx.hosts));
    await recordEvent(trx, teamId, 'domain.created', domainEventData(domain, await recordsOf(trx, domain.id)));
    return domain;
  });
}

async function assertReturnPathFree(
  ctx: DomainContext,
  name: string,
  label: string,
  trackingSubdomain: string | null,
): Promise<void> {
  const found = await findReturnPathConflict(ctx.resolver, name, label, ctx.hosts);
  if (!found) return;
  const suggestion = await pickReturnPath(ctx.resolver, name, ctx.hosts, trackingSubdomain, label);
  throw new ServiceError(
    'invalid_parameter',
    `The label ${label}.${name} already carries another service's ${found.type} record; choose another custom_return_path.`,
    {
      details: { reason: 'return_path_in_use', label, found, suggestion },
    },
  );
}

export async function updateDomain(
  db: Knex,
  teamId: string,
  id: string,
  input: UpdateDomainInput,
  ctx: DomainContext,
): Promise<DomainRow> {
  const before = await findDomain(db, teamId, id);
  assertWritable(before);
  const settings = settingsFrom(input, before);
  // Sending enabled now, after a creation without it: the free return-path check creation would have made.
  const enabling = before.sending === 'disabled' && settings.sending === 'enabled';
  if (enabling && input.custom_return_path === undefined) {
    settings.custom_return_path = await pickReturnPath(
      ctx.resolver,
      before.name,
      ctx.hosts,
      settings.tracking_subdomain,
    );
  } else if (
    input.custom_return_path !== undefined &&
    (enabling || settings.custom_return_path !== before.custom_return_path)
  ) {
    await assertReturnPathFree(ctx, before.name, settings.custom_return_path, settings.tracking_subdomain);
  }
  return db.transaction(async (trx) => {
    const locked = await trx<DomainRow>('domains').where({ id, team_id: teamId }).forUpdate().first();
    if (!locked) throw new ServiceError('not_found', 'Domain not found.');
    const now = new Date();
    const [updated] = await trx<DomainRow>('domains')
      .where({ id })
      .update({ ...settings, updated_at: now })
      .returning('*');
    const keys = await publishedKeys(trx, id);
    const changed = await syncRecords(
      trx,
      updated,
      desiredRecords(settings, keys, ctx.hosts, await logoUrlOf(trx, id)),
    );
    let domain = updated;
    if (changed) {
      // New records are checked from now on, on the pending schedule.
      [domain] = await trx<DomainRow>('domains')
        .where({ id })
        .update({ checking_since: now, next_check_at: now, check_count: 0 })
        .returning('*');
    }
    domain = await refreshStatus(trx, domain);
    await recordEvent(trx, teamId, 'domain.updated', domainEventData(domain, await recordsOf(trx, id)));
    return domain;
  });
}

export async function deleteDomain(db: Knex, teamId: string, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    const domain = await trx<DomainRow>('domains').where({ id, team_id: teamId }).forUpdate().first();
    if (!domain) throw new ServiceError('not_found', 'Domain not found.');
    assertWritable(domain);
    const data = domainEventData(domain, await recordsOf(trx, id));
    await trx('domains').where({ id }).delete();
    await recordEvent(trx, teamId, 'domain.deleted', data);
  });
}

/**
 * POST /domains/{id}/verify: check now, and reopen the 72-hour window of a domain that is not verified. Its records
 * not yet looked at, or failed because the window had closed, are `pending` again at once (Resend: "verification in
 * progress"), as the check will find them if nothing changed; a change of status is a domain.updated.
 */
export async function requestVerification(db: Knex, teamId: string, id: string): Promise<DomainRow> {
  return db.transaction(async (trx) => {
    const locked = await trx<DomainRow>('domains').where({ id, team_id: teamId }).forUpdate().first();
    if (!locked) throw notFound('Domain');
    assertWritable(locked);
    const now = new Date();
    const reopen = locked.status === 'verified' ? {} : { checking_since: now, check_count: 0 };
    const [asked] = await trx<DomainRow>('domains')
      .where({ id })
      .update({ ...reopen, next_check_at: now })
      .returning('*');
    if (locked.status === 'verified') return asked;
    const reopened = await trx('domain_records')
      .where({ domain_id: id })
      .whereIn('status', ['not_started', 'failed'])
      .update({ status: 'pending' });
    const domain = await refreshStatus(trx, asked);
    if (reopened > 0 || domain.status !== locked.status)
      await recordEvent(trx, teamId, 'domain.updated', domainEventData(domain, await recordsOf(trx, id)));
    return domain;
  });
}
