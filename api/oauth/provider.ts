// The OAuth 2.1 authorization server: oidc-provider (certified; no OAuth protocol code of ours), configured for
// authorization code + PKCE S256 only, refresh tokens rotated on every use (a replay revokes the grant), dynamic
// client registration (RFC 7591), revocation (RFC 7009), resource indicators (RFC 8707: a token is bound to this
// API or to /mcp) and its metadata (RFC 8414). Storage: PostgreSQL (shared/oauth/adapter.ts); signing keys sealed at
// rest (shared/oauth/keys.ts). The person signs in and consents on the dashboard's consent page
// (/oauth/consent/:uid), which confirms through the API (api/routes/oauth.ts). docs/oauth.md. oidc-provider (some
// 200 modules) is loaded when the provider is first made (api/oauth/server.ts), not with every api process and test.
import { createHmac } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { Knex } from 'knex';
import type { Config } from '../../shared/config.ts';
import { postgresAdapter } from '../../shared/oauth/adapter.ts';
import { signingKeys } from '../../shared/oauth/keys.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { markGrantRevoked } from '../../shared/oauth/grants.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 3600;

/** The resource indicators (RFC 8707) a token can be bound to. */
export function resources(config: Pick<Config, 'PUBLIC_BASE_URL'>) {
  return { api: `${config.PUBLIC_BASE_URL}/`, mcp: `${config.PUBLIC_BASE_URL}/mcp` };
}

/** Why oidc-provider revoked a whole grant, by the route that did it. */
function revokedReason(ctx: KoaContextWithOIDC): string {
  const route = ctx.oidc?.route;
  if (route === 'revocation') return 'revoked_by_client';
  if (route === 'token') {
    return ctx.oidc.params?.grant_type === 'refresh_token' ? 'refresh_token_replayed' : 'authorization_code_replayed';
  }
  return 'revoked';
}

export interface OAuthServerOptions {
  config: Config;
  db: Knex;
  /** Every scope a client may ask for (shared/oauth/scopes.ts scopeList). */
  scopes: string[];
  /**
   * Hears every grant the provider revokes and every access token it destroys (the token cache forgets them); the
   * provider answers once a destroyed token's forgetting resolves (shared/oauth/adapter.ts).
   */
  forget?: { grant(providerGrantId: string): void; token(token: string): Promise<void> };
}

export async function createProvider({ config, db, scopes, forget }: OAuthServerOptions): Promise<Provider> {
  const { default: Provider, errors } = await import('oidc-provider');
  const secrets = secretsKey(config);
  const targets = resources(config);
  const cookieKey = createHmac('sha256', secrets).update('oauth-cookies').digest('base64url');
  const configuration: Configuration = {
    adapter: postgresAdapter(db, { destroyed: forget?.token }),
    jwks: await signingKeys(db, secrets),
    cookies: {
      keys: [cookieKey],
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    // Resource scopes are listed here too, so a client registered with `scope` is refused anything beyond it.
    scopes: ['offline_access', ...scopes],
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientBasedCORS: () => true,
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    interactions: { url: (_ctx, interaction) => `/oauth/consent/${interaction.uid}` },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_SECONDS,
      AuthorizationCode: 60,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      Grant: 90 * 24 * 3600,
      RefreshToken: 30 * 24 * 3600,
    },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      registration: { enabled: true, initialAccessToken: false },
      revocation: {
        enabled: true,
        // A client revokes only its own tokens; a public client asking for another's hears success (no guessing).
        allowedPolicy: async (_ctx, client, token) => {
          if (token.clientId === client.clientId) return true;
          if (client.clientAuthMethod === 'none') return false;
          throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? targets.api,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (indicator !== targets.api && indicator !== targets.mcp) throw new errors.InvalidTarget();
          return {
            scope: scopes.join(' '),
            audience: indicator,
            accessTokenFormat: 'opaque',
            accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
          };
        },
      },
    },
    renderError: async (ctx, out) => {
      ctx.type = 'application/json';
      ctx.body = out;
    },
  };
  const provider = new Provider(config.PUBLIC_BASE_URL, configuration);
  provider.proxy = config.TRUST_PROXY;
  provider.on('grant.revoked', (ctx: KoaContextWithOIDC, grantId: string) => {
    forget?.grant(grantId);
    void markGrantRevoked(db, grantId, revokedReason(ctx)).catch(() => undefined);
  });
  return provider;
}
