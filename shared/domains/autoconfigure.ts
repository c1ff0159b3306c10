// Auto-configure: publishes a domain's records in the customer's own zone through RFC 2136 dynamic updates
// signed with their TSIG key. It creates what is missing, replaces values it added itself that are now wrong,
// reports what someone else published in the way as conflicts, and never deletes a record it did not create
// (autoconfigure-plan.ts has the rules). Then the domain is checked at once.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { ServiceError, notFound } from '../errors.ts';
import { recordEvent } from '../events.ts';
import { probeZone, queryRrset, sendUpdate, type ExchangeFailure, type UpdateServer } from '../dns/update.ts';
import { resolveServer, type AddressResolver } from '../dns/server-address.ts';
import type { ZoneRecord } from '../dns/wire.ts';
import { desiredRecords, type PlatformHosts } from './records.ts';
import type { ReservedTld } from './reserved.ts';
import { assertWritable, findDomain, publishedKeys, recordsOf, syncRecords, type DomainRow } from './store.ts';
import { domainEventData } from './present.ts';
import {
  credentialFromRow,
  findCredentialRow,
  keepCredential,
  parseCredential,
  type CredentialInput,
  type DnsCredential,
} from './dns-credentials.ts';
import {
  describe,
  planChanges,
  recordKey,
  rrsetKey,
  rrsetsToRead,
  valueOf,
  wantedRecords,
  type Plan,
  type Wanted,
} from './autoconfigure-plan.ts';

export interface AutoconfigureInput extends CredentialInput {
  keep_credential?: boolean;
}

export interface AutoconfigureContext {
  hosts: PlatformHosts;
  secrets: Buffer;
  /** Resolves the server's name (the platform's resolver, DNS_SERVERS). */
  resolver: AddressResolver;
  /** DNS_UPDATE_ALLOW_PRIVATE: may the server be on a private, loopback or link-local address. */
  allowPrivate: boolean;
  /** RESERVED_TLDS_ALLOWED: a zone under these reserved TLDs is a zone like any other. */
  reservedAllowed: readonly ReservedTld[];
  timeoutMs?: number;
}

export interface AutoconfigureResult {
  created: string[];
  updated: string[];
  conflicts: string[];
  credential_kept: boolean;
}

/** RCODEs of a failed prerequisite (RFC 2136 §3.2.5): the zone changed between our reading and our update. */
const ZONE_CHANGED = ['YXDOMAIN', 'YXRRSET', 'NXDOMAIN', 'NXRRSET'];
const GIVEN = ['server', 'port', 'zone', 'key_name', 'algorithm', 'secret'] as const;

function refused(reason: string, message: string, details: Record<string, unknown> = {}): ServiceError {
  return new ServiceError('invalid_parameter', message, { details: { reason, ...details } });
}

/** What a failed exchange with the customer's server means for them, in one sentence. */
function exchangeError(f: ExchangeFailure, c: DnsCredential, address: string, doing: 'query' | 'update'): ServiceError {
  const where = { server: c.server, address, port: c.port, zone: c.zone };
  const at = `${c.server}${c.server === address ? '' : ` (${address})`} port ${c.port}`;
  switch (f.status) {
    case 'unreachable':
      return refused('server_unreachable', `Could not reach the DNS server ${at}: ${f.error}.`, where);
    case 'bad_response':
      return refused('bad_response', `The answer of ${at} cannot be trusted: ${f.error}.`, where);
    case 'tsig': {
      const why: Record<string, [string, string]> = {
        BADSIG: ['tsig_bad_signature', `the secret does not match key ${c.key.name}`],
        BADKEY: ['tsig_unknown_key', `it knows no key ${c.key.name} with algorithm ${c.key.algorithm}`],
        BADTIME: ['tsig_bad_time', 'our clocks differ by more than 5 minutes'],
      };
      const [reason, text] = why[f.error] ?? ['tsig_refused', `TSIG error ${f.error}`];
      return refused(reason, `The DNS server ${at} refused our TSIG signature (${f.error}): ${text}.`, {
        ...where,
        tsig_error: f.error,
      });
    }
    case 'rcode': {
      const details = { ...where, rcode: f.rcode };
      if (f.rcode === 'REFUSED') {
        return doing === 'update'
          ? refused(
              'update_refused',
              `The DNS server ${at} refused the update of zone ${c.zone} (REFUSED): allow updates with key ${c.key.name} (allow-update or update-policy).`,
              details,
            )
          : refused(
              'query_refused',
              `The DNS server ${at} refused to answer for zone ${c.zone} (REFUSED): is it authoritative for the zone?`,
              details,
            );
      }
      if (f.rcode === 'NOTAUTH')
        return refused(
          'not_authoritative',
          `The DNS server ${at} is not authoritative for zone ${c.zone} (NOTAUTH).`,
          details,
        );
      if (f.rcode === 'NOTZONE')
        return refused(
          'not_in_zone',
          `The DNS server ${at} says the records are not inside zone ${c.zone} (NOTZONE).`,
          details,
        );
      if (ZONE_CHANGED.includes(f.rcode))
        return refused('zone_changed', `Zone ${c.zone} changed while we updated it (${f.rcode}); try again.`, details);
      if (f.rcode === 'FORMERR' || f.rcode === 'NOTIMP')
        return refused(
          'update_not_supported',
          `The DNS server ${at} does not take RFC 2136 updates (${f.rcode}).`,
          details,
        );
      return refused('server_failure', `The DNS server ${at} failed to answer (${f.rcode}).`, details);
    }
  }
}

/** The first of the server's addresses that answers for the zone, authoritatively, with our key accepted. */
async function reachServer(c: DnsCredential, ctx: AutoconfigureContext): Promise<UpdateServer> {
  const found = await resolveServer(ctx.resolver, c.server, ctx.allowPrivate);
  if (found.status === 'not_found')
    throw refused('server_not_found', `The DNS server name ${c.server} does not resolve: ${found.error}.`, {
      server: c.server,
    });
  if (found.status === 'private') {
    throw refused(
      'private_address',
      `The DNS server ${c.server} is on a private, loopback or link-local address (${found.addresses.join(', ')}); this platform sends updates only to public addresses.`,
      { server: c.server },
    );
  }
  let failure: ServiceError | undefined;
  for (const address of found.addresses) {
    const server: UpdateServer = { address, port: c.port, key: c.key, timeoutMs: ctx.timeoutMs };
    const probe = await probeZone(server, c.zone);
    if (probe.status === 'ok') {
      if (probe.authoritative) return server;
      throw refused(
        'not_authoritative',
        `The DNS server ${c.server} is not authoritative for zone ${c.zone}: it has no SOA record for it.`,
        { server: c.server, zone: c.zone },
      );
    }
    failure = exchangeError(probe, c, address, 'query');
    if (probe.status !== 'unreachable') break;
  }
  throw failure!;
}

async function observe(server: UpdateServer, c: DnsCredential, wanted: Wanted[]): Promise<Map<string, ZoneRecord[]>> {
  const sets = rrsetsToRead(wanted);
  const answers = await Promise.all(sets.map((s) => queryRrset(server, s.name, s.type)));
  const observed = new Map<string, ZoneRecord[]>();
  for (const [i, s] of sets.entries()) {
    const a = answers[i];
    if (a.status !== 'ok') throw exchangeError(a, c, server.address, 'query');
    observed.set(rrsetKey(s.name, s.type), a.records);
  }
  return observed;
}

/** Values we added to this domain's zone and have not removed since. */
async function ownedValues(db: Knex, domainId: string): Promise<Set<string>> {
  const rows: { name: string; type: string; value: string; action: string }[] = await db('domain_dns_changes')
    .distinctOn('name', 'type', 'value')
    .select('name', 'type', 'value', 'action')
    .where({ domain_id: domainId })
    .orderBy([
      { column: 'name' },
      { column: 'type' },
      { column: 'value' },
      { column: 'at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
  return new Set(rows.filter((r) => r.action === 'add').map((r) => recordKey(r.name, r.type, r.value)));
}

/** Reads, plans and sends; if the zone changed between reading and sending, reads again once. */
async function apply(
  db: Knex,
  domain: DomainRow,
  server: UpdateServer,
  c: DnsCredential,
  wanted: Wanted[],
): Promise<{ plan: Plan; applied: boolean }> {
  for (let attempt = 1; ; attempt++) {
    const plan = planChanges(wanted, await observe(server, c, wanted), await ownedValues(db, domain.id));
    if (plan.changes.length === 0) return { plan, applied: false };
    const sent = await sendUpdate(server, c.zone, plan.prerequisites, plan.changes);
    if (sent.status === 'ok') return { plan, applied: true };
    if (!(sent.status === 'rcode' && ZONE_CHANGED.includes(sent.rcode) && attempt < 2))
      throw exchangeError(sent, c, server.address, 'update');
  }
}

export async function autoconfigure(
  db: Knex,
  teamId: string,
  domainId: string,
  input: AutoconfigureInput,
  ctx: AutoconfigureContext,
): Promise<AutoconfigureResult> {
  const domain = await findDomain(db, teamId, domainId);
  assertWritable(domain);
  const given = GIVEN.some((f) => input[f] !== undefined);
  const stored = given ? undefined : await findCredentialRow(db, domainId);
  const credential = stored
    ? credentialFromRow(stored, ctx.secrets)
    : parseCredential(input, domain.name, ctx.reservedAllowed);
  const server = await reachServer(credential, ctx);
  const wanted = wantedRecords(domain.name, desiredRecords(domain, await publishedKeys(db, domainId), ctx.hosts));
  const { plan, applied } = await apply(db, domain, server, credential, wanted);

  // A server may answer NOERROR and still drop an add (BIND ignores a CNAME beside other data, RFC 2136
  // §3.4.2.2): read back what we added, and claim only what is there. If the read-back itself fails, the
  // server's NOERROR stands: losing track of records we did add would make them look foreign later.
  const conflicts = [...plan.conflicts];
  const adding = plan.actions.filter((a) => a.add);
  const after =
    applied && adding.length
      ? await observe(
          server,
          credential,
          wanted.filter((w) => adding.some((a) => a.key === rrsetKey(w.name, w.type))),
        ).catch(() => null)
      : null;
  const confirmed = plan.actions.filter((a) => {
    if (!a.add || !after) return true;
    const there = (after.get(a.key) ?? []).some((r: ZoneRecord) => valueOf(r) === valueOf(a.add!));
    if (!there)
      conflicts.push(
        `${describe(a.add.name, a.add.type, valueOf(a.add))}: the server answered NOERROR but did not keep it`,
      );
    return there;
  });

  const credentialKept = await db.transaction(async (trx) => {
    const locked = await trx<DomainRow>('domains').where({ id: domainId, team_id: teamId }).forUpdate().first();
    if (!locked) throw notFound('Domain');
    const at = new Date();
    const rows = plan.actions
      .flatMap((a) => [
        ...a.deletes.map((r) => ({ record: r, action: 'delete' })),
        ...(a.add && confirmed.includes(a) ? [{ record: a.add, action: 'add' }] : []),
      ])
      .map(({ record, action }) => ({
        id: newId(),
        team_id: teamId,
        domain_id: domainId,
        name: record.name.toLowerCase(),
        type: record.type,
        value: valueOf(record),
        action,
        zone: credential.zone,
        server: credential.server,
        at,
      }));
    if (applied && rows.length) await trx('domain_dns_changes').insert(rows);
    const changed = await syncRecords(
      trx,
      locked,
      desiredRecords(locked, await publishedKeys(trx, domainId), ctx.hosts),
    );
    // Check now; a domain that is not verified gets a fresh 72-hour window, as POST /domains/{id}/verify does.
    const reopen = locked.status === 'verified' && !changed ? {} : { checking_since: at, check_count: 0 };
    const [row] = await trx<DomainRow>('domains')
      .where({ id: domainId })
      .update({ ...reopen, next_check_at: at })
      .returning('*');
    if (changed) await recordEvent(trx, teamId, 'domain.updated', domainEventData(row, await recordsOf(trx, domainId)));
    if (given && input.keep_credential) await keepCredential(trx, locked, credential, ctx.secrets);
    return Boolean(await findCredentialRow(trx, domainId));
  });

  return {
    created: confirmed.filter((a) => a.kind === 'created').map((a) => a.line),
    updated: confirmed.filter((a) => a.kind === 'updated').map((a) => a.line),
    conflicts,
    credential_kept: credentialKept,
  };
}
