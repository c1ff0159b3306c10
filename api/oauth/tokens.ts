// OAuth access tokens as API credentials. A token is looked up through oidc-provider (its AccessToken model, in
// PostgreSQL) and its grant's row (the team, and the granting person still a member); the answer is kept in this
// process for at most a second, so a token costs a map lookup on a busy client. A revocation of a grant or a token
// is heard by every api copy at once (revocations.ts: Redis pub/sub) and forgets what it cached; answers are cached
// only while that channel is live, and a lookup that was under way when a revocation was heard is not cached, so a
// revoked grant is refused by the next request to any copy. A person leaving the team still takes up to a second.
import type Provider from 'oidc-provider';
import type { Knex } from 'knex';
import type { TeamRow } from '../../shared/teams/teams.ts';
import type { Role } from '../../shared/accounts/sessions.ts';
import { grantHolder } from '../../shared/oauth/grants.ts';

export const TOKEN_CACHE_MS = 1000;
const MAX_ENTRIES = 50_000;

export interface OAuthCaller {
  team: TeamRow;
  role: Role;
  scopes: Set<string>;
  /** The resource (RFC 8707) the token is bound to: the API's or /mcp's. */
  audience: string;
  /** Our grant id (GET /oauth/grants) and oidc-provider's. */
  grantId: string;
  providerGrantId: string;
  clientId: string;
  userId: string;
}

interface Entry {
  caller: OAuthCaller | null;
  until: number;
}

export class TokenCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every forgetting: a lookup that began before one is not cached. */
  private epoch = 0;

  constructor(
    private readonly deps: { db: Knex },
    private readonly provider: () => Promise<Provider>,
    /** May answers be cached now (the revocation channel is live)? */
    private readonly cacheable: () => boolean = () => true,
  ) {}

  async verify(token: string): Promise<OAuthCaller | null> {
    const now = Date.now();
    const hit = this.entries.get(token);
    if (hit && hit.until > now) return hit.caller;
    const epoch = this.epoch;
    const { caller, expiresAt } = await this.load(token);
    // A refusal is cached as it is (a token never comes back to life); a caller only while revocations are heard.
    if (epoch !== this.epoch || (caller && !this.cacheable())) return caller;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(token, { caller, until: Math.min(now + TOKEN_CACHE_MS, expiresAt ?? Infinity) });
    return caller;
  }

  forgetToken(token: string): void {
    this.epoch++;
    this.entries.delete(token);
  }

  forgetGrant(providerGrantId: string): void {
    this.epoch++;
    for (const [token, entry] of this.entries)
      if (entry.caller?.providerGrantId === providerGrantId) this.entries.delete(token);
  }

  /** Forgets everything (a token revoked elsewhere, whose value is never sent; the channel lost). */
  clear(): void {
    this.epoch++;
    this.entries.clear();
  }

  private async load(token: string): Promise<{ caller: OAuthCaller | null; expiresAt?: number }> {
    // Opaque tokens are 43 base64url characters; anything else is not one of ours (no lookup).
    if (!/^[A-Za-z0-9_-]{20,128}$/.test(token)) return { caller: null };
    const provider = await this.provider();
    const at = await provider.AccessToken.find(token);
    if (!at || at.isExpired || !at.grantId) return { caller: null };
    const holder = await grantHolder(this.deps.db, at.grantId);
    if (!holder || holder.revoked_at || !holder.role) return { caller: null };
    const team: TeamRow | undefined = await this.deps.db('teams').where({ id: holder.team_id }).first();
    if (!team) return { caller: null };
    const caller: OAuthCaller = {
      team,
      role: holder.role,
      scopes: new Set((at.scope ?? '').split(' ').filter(Boolean)),
      audience: String(at.aud),
      grantId: holder.id,
      providerGrantId: at.grantId,
      clientId: String(at.clientId),
      userId: holder.user_id,
    };
    return { caller, expiresAt: (at.exp ?? 0) * 1000 };
  }
}
