import { z } from 'zod';
import * as domains from '../../shared/domains/domains.ts';
import { findDomainWithRecords, listDomains, recordsOf } from '../../shared/domains/store.ts';
import { presentDomain, presentListItem } from '../../shared/domains/present.ts';
import { rotateDkim } from '../../shared/domains/rotate.ts';
import { cancelClaim } from '../../shared/domains/claims.ts';
import { regions } from '../../shared/teams/teams.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { defineOperation } from './operation.ts';
import { deleted, pathId, ref, timestamp } from './schemas.ts';
import type { ApiDeps } from '../deps.ts';

const enabled = z.enum(['enabled', 'disabled']);
const capabilities = z.object({ sending: enabled, receiving: enabled });
const record = z
  .object({
    record: z.enum(['SPF', 'DKIM', 'Receiving', 'Tracking', 'TrackingCAA', 'BIMI']),
    name: z.string().describe('Relative to the domain; `@` is the domain itself'),
    type: z.enum(['MX', 'TXT', 'CNAME', 'CAA']),
    ttl: z.string(),
    status: z.enum(['pending', 'verified', 'failed', 'temporary_failure', 'not_started']),
    value: z.string(),
    priority: z.number().int().optional(),
  })
  .meta({ id: 'DomainRecord' });

const tlsPolicy = z
  .enum(['opportunistic', 'enforced'])
  .describe(
    "The domain's outgoing mail: `opportunistic` (the default) uses STARTTLS whenever the receiving server offers it " +
      'and sends in the clear when it does not; `enforced` never sends in the clear: without an encrypted session ' +
      'the recipient is deferred and tried again, and bounced if none comes within the retry window (72 hours)',
  );

const listItem = z
  .object({
    id: z.uuid(),
    name: z.string(),
    status: z.enum(['pending', 'verified', 'failed', 'not_started', 'partially_verified', 'partially_failed']),
    created_at: timestamp,
    region: z.enum(regions),
    open_tracking: z.boolean(),
    click_tracking: z.boolean(),
    capabilities,
    managed: z.boolean(),
  })
  .meta({ id: 'DomainListItem' });

const domain = listItem
  .extend({
    object: z.literal('domain'),
    tracking_subdomain: z.string().nullable(),
    receiving_host: z.string(),
    custom_return_path: z.string(),
    tls: tlsPolicy,
    records: z.array(record),
  })
  .meta({ id: 'Domain' });

/** Shared with POST /domains/claim, which takes the same settings for the domain it will create. */
export const trackingFlag = (what: 'Open' | 'Click') =>
  z
    .boolean()
    .optional()
    .describe(
      `${what} tracking for the domain's mail (default false); on, the domain's records include the Tracking CNAME and TrackingCAA at \`tracking_subdomain\``,
    );
export const trackingSubdomain = z
  .string()
  .max(63)
  .optional()
  .describe('The label the Tracking records go under (one DNS label; default `links` once tracking is on)');
export const regionField = z
  .enum(regions)
  .optional()
  .describe(
    "Where the domain sends from (default us-east-1); while the region is in the team's sending sandbox, its mail reaches only the team's own identities, domains and the simulator",
  );

const settings = {
  custom_return_path: z
    .string()
    .max(63)
    .optional()
    .describe('The label the sending records go under; a free one is chosen when absent'),
  open_tracking: trackingFlag('Open'),
  click_tracking: trackingFlag('Click'),
  tracking_subdomain: trackingSubdomain,
  capabilities: z
    .object({
      sending: enabled.optional().describe('Sending from the domain (default enabled)'),
      receiving: enabled
        .optional()
        .describe("Receiving at the domain through the platform's MX (default disabled); adds the Receiving MX record"),
    })
    .optional()
    .describe('What the domain is used for; at least one stays enabled'),
  receiving_host: z.string().max(63).optional().describe('`@` (the domain itself) or one DNS label'),
  tls: tlsPolicy.optional(),
};

const domainParams = z.object({ domain_id: pathId('domain') });

function context(deps: ApiDeps): domains.DomainContext {
  return {
    hosts: deps.config,
    secrets: secretsKey(deps.config),
    resolver: deps.dns,
    reservedAllowed: deps.config.RESERVED_TLDS_ALLOWED,
  };
}

const base = { tag: 'domains', permission: 'full_access' } as const;

export const domainOperations = [
  defineOperation({
    ...base,
    operationId: 'createDomain',
    method: 'post',
    path: '/domains',
    summary: 'Add a domain',
    description: 'Add a domain: generates its DKIM key and answers the DNS records to publish.',
    scope: 'domains:write',
    status: 201,
    body: z.object({
      name: z.string().max(300).describe('The domain name, such as `example.com` or `mail.example.com`'),
      region: regionField,
      ...settings,
    }),
    response: domain.omit({ object: true }).meta({ id: 'DomainCreated' }),
    handler: async ({ auth, body, deps }) => {
      const row = await domains.createDomain(deps.db, auth.team.id, body, context(deps));
      const { object: _o, ...rest } = presentDomain(row, await recordsOf(deps.db, row.id));
      return rest;
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listDomains',
    method: 'get',
    path: '/domains',
    summary: 'List domains',
    description: "List the team's domains, newest first (the managed domain included).",
    scope: 'domains:read',
    query: listQuery,
    response: listEnvelope(listItem),
    handler: async ({ auth, query, deps }) => {
      const page = await listDomains(deps.db, auth.team.id, query);
      return toList(page, presentListItem);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getDomain',
    method: 'get',
    path: '/domains/{domain_id}',
    summary: 'Retrieve a domain',
    description: 'Retrieve a domain with its records and their statuses.',
    scope: 'domains:read',
    params: domainParams,
    response: domain,
    handler: async ({ auth, params, deps }) => {
      const { row, records } = await findDomainWithRecords(deps.db, auth.team.id, params.domain_id);
      return presentDomain(row, records);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'updateDomain',
    method: 'patch',
    path: '/domains/{domain_id}',
    summary: 'Update a domain',
    description:
      'Change tracking, capabilities, receiving host, return path or TLS policy; changed records are checked anew.',
    scope: 'domains:write',
    params: domainParams,
    body: z.object(settings),
    response: ref('domain'),
    handler: async ({ auth, params, body, deps }) => {
      const row = await domains.updateDomain(deps.db, auth.team.id, params.domain_id, body, context(deps));
      return { object: 'domain' as const, id: row.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'deleteDomain',
    method: 'delete',
    path: '/domains/{domain_id}',
    summary: 'Remove a domain',
    description: 'Remove a domain, its keys and its records. The domain_id of an open claim cancels the claim.',
    scope: 'domains:write',
    params: domainParams,
    response: deleted('domain'),
    handler: async ({ auth, params, deps }) => {
      // Resend's way to cancel a claim: delete the domain it would become.
      if (await cancelClaim(deps.db, auth.team.id, params.domain_id))
        return { object: 'domain' as const, id: params.domain_id, deleted: true as const };
      await domains.deleteDomain(deps.db, auth.team.id, params.domain_id);
      return { object: 'domain' as const, id: params.domain_id, deleted: true as const };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'verifyDomain',
    method: 'post',
    path: '/domains/{domain_id}/verify',
    summary: 'Verify a domain',
    description:
      "Check the domain's records now (the worker runs the check within seconds). A domain that is not verified gets " +
      'a new 72-hour window: its records not yet looked at, or failed, are `pending` until the check.',
    scope: 'domains:write',
    params: domainParams,
    response: ref('domain'),
    handler: async ({ auth, params, deps }) => {
      const row = await domains.requestVerification(deps.db, auth.team.id, params.domain_id);
      return { object: 'domain' as const, id: row.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'rotateDomainDkim',
    method: 'post',
    path: '/domains/{domain_id}/dkim/rotate',
    summary: 'Rotate the DKIM key',
    description:
      'Publish a new DKIM selector; signing switches to it once it verifies, the old one stays valid 7 days.',
    scope: 'domains:write',
    params: domainParams,
    response: ref('domain').extend({ selector: z.string(), records: z.array(record) }),
    handler: async ({ auth, params, deps }) => {
      const { domain: row, selector } = await rotateDkim(deps.db, auth.team.id, params.domain_id, context(deps));
      const { records } = presentDomain(row, await recordsOf(deps.db, row.id));
      return { object: 'domain' as const, id: row.id, selector, records };
    },
  }),
];
