// The authorization server inside the api: oidc-provider made on first use (its keys come from the database),
// mounted under /oauth, its metadata also at the root's /.well-known (RFC 8414), dynamic registration rate limited
// per client address. docs/oauth.md.
import type { Context, Next } from 'koa';
import type Provider from 'oidc-provider';
import type { Knex } from 'knex';
import type { Config } from '../../shared/config.ts';
import type { Logger } from '../../shared/logger.ts';
import type { Redis } from '../../shared/redis.ts';
import { createProvider } from './provider.ts';
import { redisKey } from '../../shared/redis.ts';
import { TokenCache, type OAuthCaller } from './tokens.ts';
import { revocationBus } from './revocations.ts';

/** Our own API routes under /oauth (grants and the consent page's calls); everything else there is the provider's. */
const OURS = /^\/oauth\/(grants|consent)(\/|$)/;
const METADATA = new Set(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']);

export interface OAuthServer {
  /** Every scope a client may ask for. */
  scopes: string[];
  provider(): Promise<Provider>;
  middleware(ctx: Context, next: Next): Promise<void>;
  /** The caller of an access token bound to `resource`, or null when it is unknown, expired, revoked. */
  verify(token: string): Promise<OAuthCaller | null>;
  /** Forgets cached tokens of a grant in every api copy (revocations.ts); resolves once they were told. */
  forgetGrant(providerGrantId: string): Promise<void>;
  /** Stops listening for revocations. */
  close(): Promise<void>;
}

/** What it needs of the api's deps (not ApiDeps itself, which names this file's type). */
interface Deps {
  config: Config;
  db: Knex;
  redis: Redis;
  log: Logger;
}

/** One registration counted for the address in its hour; true when over the limit. */
async function registrationsExceeded(deps: Deps, ip: string): Promise<number | null> {
  const hour = Math.floor(Date.now() / 3_600_000);
  const key = redisKey(deps.config, 'oauth-reg', ip, String(hour));
  const count = Number(
    await deps.redis.eval(
      "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('EXPIRE', KEYS[1], 3700) end return n",
      1,
      key,
    ),
  );
  if (count <= deps.config.OAUTH_REGISTRATIONS_PER_HOUR) return null;
  return Math.max(1, Math.ceil(((hour + 1) * 3_600_000 - Date.now()) / 1000));
}

export function createOAuthServer(deps: Deps, scopes: string[]): OAuthServer {
  let made: Promise<Provider> | undefined;
  const cache: TokenCache = new TokenCache(
    deps,
    () => provider(),
    () => bus.live(),
  );
  const bus = revocationBus(deps.redis, redisKey(deps.config, 'oauth-revocations'), deps.log, {
    grant: (id) => cache.forgetGrant(id),
    all: () => cache.clear(),
  });
  const forgetGrant = (id: string) => {
    cache.forgetGrant(id);
    return bus.publishGrant(id);
  };
  const forget = {
    grant: (id: string) => void forgetGrant(id),
    token: (t: string) => {
      cache.forgetToken(t);
      return bus.publishToken();
    },
  };
  const provider = (): Promise<Provider> => {
    made ??= createProvider({ config: deps.config, db: deps.db, scopes, forget }).then((p) => {
      p.on('server_error', (_ctx, err) => deps.log.error({ err }, 'oauth.server_error'));
      (p as unknown as { silent: boolean }).silent = true;
      return p;
    });
    made.catch(() => (made = undefined));
    return made;
  };
  let callback: ((req: Context['req'], res: Context['res']) => Promise<void>) | undefined;

  async function middleware(ctx: Context, next: Next) {
    const path = ctx.path;
    let inner: string;
    if (METADATA.has(path)) inner = '/.well-known/openid-configuration' + ctx.search;
    else if (path.startsWith('/oauth/') && !OURS.test(path)) inner = ctx.url.slice('/oauth'.length);
    else return next();
    if (path === '/oauth/reg' && ctx.method === 'POST') {
      const retry = await registrationsExceeded(deps, ctx.ip);
      if (retry) {
        ctx.status = 429;
        ctx.set('Retry-After', String(retry));
        ctx.body = {
          error: 'rate_limit_exceeded',
          error_description: `Too many client registrations from this address: at most ${deps.config.OAUTH_REGISTRATIONS_PER_HOUR} an hour.`,
        };
        return;
      }
    }
    const p = await provider();
    callback ??= p.callback() as unknown as typeof callback;
    // oidc-provider reads its mount path from originalUrl minus url (helpers/oidc_context.js urlFor).
    const outer = ctx.req.url;
    (ctx.req as { originalUrl?: string }).originalUrl = '/oauth' + inner;
    ctx.req.url = inner;
    ctx.respond = false;
    try {
      await callback!(ctx.req, ctx.res);
    } finally {
      ctx.req.url = outer;
    }
    ctx.status = ctx.res.statusCode;
  }

  return {
    scopes,
    provider,
    middleware,
    verify: (token) => cache.verify(token),
    forgetGrant,
    close: () => bus.close(),
  };
}
