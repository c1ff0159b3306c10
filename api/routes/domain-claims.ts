import { z } from 'zod';
import { createClaim, findClaim, presentClaim, type ClaimContext } from '../../shared/domains/claims.ts';
import { verifyClaim } from '../../shared/domains/claim-verify.ts';
import { regions } from '../../shared/teams/teams.ts';
import { regionField, trackingFlag, trackingSubdomain } from './domains.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { defineOperation } from './operation.ts';
import { timestamp } from './schemas.ts';
import type { ApiDeps } from '../deps.ts';

const claimRecord = z
  .object({
    record: z.literal('Claim'),
    name: z.string().describe('Relative to the domain: publish it at `_postwerk-claim.<name>`'),
    type: z.literal('TXT'),
    ttl: z.string(),
    status: z.enum(['pending', 'verified', 'failed', 'temporary_failure', 'not_started']),
    value: z.string().describe('The whole TXT value, exactly'),
  })
  .meta({ id: 'DomainClaimRecord' });

const claim = z
  .object({
    object: z.literal('domain_claim'),
    id: z.uuid(),
    name: z.string(),
    status: z.enum(['pending', 'verified', 'completed', 'blocked', 'expired', 'superseded', 'canceled', 'failed']),
    domain_id: z
      .uuid()
      .nullable()
      .describe(
        "The id the domain takes in your team: the path id of the claim routes, and the domain's id once the claim completes",
      ),
    region: z.enum(regions).nullable(),
    record: claimRecord,
    blocked_reason: z.enum(['grace_period', 'recent_owner_activity', 'pending_scheduled_emails']).nullable(),
    failure_reason: z.string().nullable(),
    created_at: timestamp,
    expires_at: timestamp,
  })
  .meta({ id: 'DomainClaim' });

const claimParams = z.object({
  domain_id: z.uuid().describe('The `domain_id` of the claim, as POST /domains/claim answered it'),
});

function context(deps: ApiDeps): ClaimContext {
  return {
    hosts: deps.config,
    secrets: secretsKey(deps.config),
    resolver: deps.dns,
    managedHost: deps.config.MANAGED_DOMAIN_HOST,
    reservedAllowed: deps.config.RESERVED_TLDS_ALLOWED,
  };
}

const base = { tag: 'domains', permission: 'full_access' } as const;

export const domainClaimOperations = [
  defineOperation({
    ...base,
    operationId: 'createDomainClaim',
    method: 'post',
    path: '/domains/claim',
    summary: 'Claim a domain',
    description:
      'Claim a domain another team has verified: answers the TXT record that proves you control it, and the domain_id it will take in your team (valid 7 days; a new claim for the name supersedes this one).',
    scope: 'domains:write',
    status: 201,
    body: z.object({
      name: z.string().max(300).describe('The domain name another team has verified'),
      region: regionField,
      custom_return_path: z
        .string()
        .max(63)
        .optional()
        .describe('The label the sending records go under once the domain is yours; a free one is chosen when absent'),
      open_tracking: trackingFlag('Open'),
      click_tracking: trackingFlag('Click'),
      tracking_subdomain: trackingSubdomain,
    }),
    response: claim,
    handler: async ({ auth, body, deps }) =>
      presentClaim(await createClaim(deps.db, auth.team.id, body, context(deps))),
  }),
  defineOperation({
    ...base,
    operationId: 'getDomainClaim',
    method: 'get',
    path: '/domains/{domain_id}/claim',
    summary: 'Retrieve a domain claim',
    description:
      'Retrieve a claim by its domain_id (the id allocated for the domain in your team when the claim started).',
    scope: 'domains:read',
    params: claimParams,
    response: claim,
    handler: async ({ auth, params, deps }) => presentClaim(await findClaim(deps.db, auth.team.id, params.domain_id)),
  }),
  defineOperation({
    ...base,
    operationId: 'verifyDomainClaim',
    method: 'post',
    path: '/domains/{domain_id}/claim/verify',
    summary: 'Verify a domain claim',
    description:
      "Look the claim's TXT record up now; once it is found and the safety checks pass, the domain moves to your team (with new DKIM keys and records to publish) and leaves the team that had it. Re-checked in the background until it completes or expires.",
    scope: 'domains:write',
    params: claimParams,
    response: claim,
    handler: async ({ auth, params, deps }) =>
      presentClaim(await verifyClaim(deps.db, auth.team.id, params.domain_id, context(deps))),
  }),
];
