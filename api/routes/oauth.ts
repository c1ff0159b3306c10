// The oauth area's API operations (docs/oauth.md): the grants a team gave to OAuth clients (resend-api.md §1.4
// shapes; no OAuth scope reaches them, spec Authentication 5), and the consent page's calls (session only).
// The authorization server itself (authorize, token, registration, revocation, metadata) is oidc-provider,
// mounted by api/oauth/server.ts.
import { z } from 'zod';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { iso, isoRequired } from '../../shared/time.ts';
import { defineOperation } from './operation.ts';
import { idParams, timestamp } from './schemas.ts';
import { getGrant, listGrants, type GrantRow } from '../../shared/oauth/grants.ts';
import { revokeGrant } from '../oauth/revoke.ts';
import { consentDetails, decideConsent } from '../oauth/consent.ts';
import type { ApiDeps } from '../deps.ts';

const grant = z
  .object({
    object: z.literal('oauth_grant'),
    id: z.uuid(),
    client_id: z.string(),
    scopes: z.array(z.string()),
    created_at: timestamp,
    revoked_at: timestamp.nullable(),
    revoked_reason: z.string().nullable(),
    client: z.object({ name: z.string().nullable(), logo_uri: z.string().nullable() }),
  })
  .meta({ id: 'OAuthGrant' });

function present(row: GrantRow & { client_name: string | null; logo_uri: string | null }): z.input<typeof grant> {
  return {
    object: 'oauth_grant',
    id: row.id,
    client_id: row.client_id,
    scopes: row.scopes,
    created_at: isoRequired(row.created_at),
    revoked_at: iso(row.revoked_at),
    revoked_reason: row.revoked_reason,
    client: { name: row.client_name, logo_uri: row.logo_uri },
  };
}

const consent = z
  .object({
    object: z.literal('oauth_consent'),
    uid: z.string(),
    client: z.object({
      id: z.string(),
      name: z.string().nullable(),
      logo_uri: z.string().nullable(),
      redirect_host: z.string().describe('Where the answer goes back to'),
    }),
    scopes: z.array(z.object({ scope: z.string(), description: z.string() })),
    resources: z.array(z.string()).describe('What the access is for: this API, or its MCP server at /mcp'),
    team: z.object({ id: z.uuid(), name: z.string() }).nullable().describe('The team the access is granted on'),
    role: z.enum(['admin', 'member', 'viewer']).nullable(),
  })
  .meta({ id: 'OAuthConsent' });

const decided = z.object({ redirect_to: z.string().describe('Where the browser goes next') }).meta({
  id: 'OAuthConsentDecision',
});
const grantedScopes = z
  .object({
    scopes: z
      .array(z.string().max(100))
      .min(1)
      .max(100)
      .optional()
      .describe(
        'The scopes the person grants: some or all of those asked (the page lets them untick any). Absent: all of them. A scope not asked for is 422; to grant nothing, decline.',
      ),
  })
  .meta({ id: 'OAuthConsentScopes' });

const uidParams = z.object({
  uid: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .describe("The authorization request's interaction id, from the consent page's URL"),
});

const allowed = (deps: ApiDeps) => new Set(deps.oauth!.scopes);
const base = { tag: 'oauth', permission: 'full_access', scope: null, role: 'admin' } as const;
const session = { tag: 'oauth', permission: 'session', scope: null } as const;

export const oauthOperations = [
  defineOperation({
    ...base,
    role: 'viewer',
    operationId: 'listOAuthGrants',
    method: 'get',
    path: '/oauth/grants',
    summary: 'List OAuth grants',
    description:
      "The access the team's members granted to OAuth clients (an MCP client, an app), newest first, revoked ones included with when and why. No OAuth token reaches this.",
    query: listQuery,
    response: listEnvelope(grant),
    handler: async ({ auth, query, deps }) => toList(await listGrants(deps.db, auth.team.id, query), present),
  }),
  defineOperation({
    ...base,
    operationId: 'revokeOAuthGrant',
    method: 'delete',
    path: '/oauth/grants/{id}',
    summary: 'Revoke an OAuth grant',
    description:
      'Revokes a grant: its access and refresh tokens stop working at once, on every api copy (the answer comes once they were all told). Revoking a revoked grant answers it as it is.',
    params: idParams('OAuth grant'),
    response: z
      .object({ object: z.literal('oauth_grant'), id: z.uuid(), revoked_at: timestamp, revoked_reason: z.string() })
      .meta({ id: 'OAuthGrantRevoked' }),
    handler: async ({ auth, params, deps }) => {
      const row = await revokeGrant(deps, await getGrant(deps.db, auth.team.id, params.id), 'revoked_by_team');
      return {
        object: 'oauth_grant' as const,
        id: row.id,
        revoked_at: isoRequired(row.revoked_at!),
        revoked_reason: row.revoked_reason!,
      };
    },
  }),
  defineOperation({
    ...session,
    operationId: 'getOAuthConsent',
    method: 'get',
    path: '/oauth/consent/{uid}/details',
    summary: 'What an authorization request asks for',
    description:
      "For the consent page: the client asking (its registered name and logo), each scope in plain words, and the team the grant would be on (the session's current team). Only the browser that started the authorization sees it.",
    params: uidParams,
    response: consent,
    handler: async ({ params, ctx, deps, session: s }) =>
      consentDetails(await deps.oauth!.provider(), ctx, params.uid, s, deps.config, allowed(deps)),
  }),
  ...(['confirm', 'deny'] as const).map((decision) =>
    defineOperation({
      ...session,
      operationId: decision === 'confirm' ? 'confirmOAuthConsent' : 'denyOAuthConsent',
      method: 'post',
      path: `/oauth/consent/{uid}/${decision}`,
      summary: decision === 'confirm' ? 'Grant an authorization request' : 'Decline an authorization request',
      description:
        decision === 'confirm'
          ? "Grants the client the scopes it asked for, or those of them the person left ticked (`scopes`), on the session's current team: its tokens carry only those. The answer names where the browser goes next (back to the client, with its code)."
          : 'Declines: the client hears access_denied; the answer names where the browser goes next.',
      params: uidParams,
      ...(decision === 'confirm' ? { body: grantedScopes } : {}),
      response: decided,
      handler: async ({ params, body, ctx, deps, session: s }) =>
        decideConsent(await deps.oauth!.provider(), ctx, deps.db, {
          uid: params.uid,
          session: s,
          config: deps.config,
          allowed: allowed(deps),
          approve: decision === 'confirm',
          granted: (body as { scopes?: string[] } | undefined)?.scopes,
        }),
    }),
  ),
];
