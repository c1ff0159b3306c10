// oidc-provider's storage in PostgreSQL (its Adapter interface, one instance per model name): a row per model and
// id in `oauth_models`. Expired rows are never answered; the daily retention sweep may delete them
// (deleteExpiredOAuthRows). A revoked grant's rows go at once (revokeByGrantId), so its tokens stop being found.
import type { Knex } from 'knex';

type Payload = Record<string, unknown> & {
  grantId?: string;
  uid?: string;
  userCode?: string;
  consumed?: unknown;
};

const TABLE = 'oauth_models';

/**
 * `destroyed`: told of each access token destroyed (RFC 7009's revocation among others) and awaited before the
 * provider answers, so every api copy's token cache has been told before the revoking client hears back.
 */
export function postgresAdapter(db: Knex, hooks: { destroyed?: (accessToken: string) => Promise<void> } = {}) {
  return class PostgresAdapter {
    constructor(readonly model: string) {}

    async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
      const row = {
        model: this.model,
        id,
        payload: JSON.stringify(payload),
        expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
        grant_id: payload.grantId ?? null,
        uid: payload.uid ?? null,
        user_code: payload.userCode ?? null,
      };
      await db(TABLE).insert(row).onConflict(['model', 'id']).merge();
    }

    private async one(where: Record<string, string>): Promise<Payload | undefined> {
      const row = await db(TABLE)
        .where({ model: this.model, ...where })
        .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', db.fn.now()))
        .first('payload', 'consumed_at');
      if (!row) return undefined;
      const payload = row.payload as Payload;
      return row.consumed_at
        ? { ...payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) }
        : payload;
    }

    find(id: string) {
      return this.one({ id });
    }

    findByUid(uid: string) {
      return this.one({ uid });
    }

    findByUserCode(userCode: string) {
      return this.one({ user_code: userCode });
    }

    async consume(id: string): Promise<void> {
      await db(TABLE).where({ model: this.model, id }).update({ consumed_at: db.fn.now() });
    }

    async destroy(id: string): Promise<void> {
      await db(TABLE).where({ model: this.model, id }).delete();
      if (this.model === 'AccessToken') await hooks.destroyed?.(id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db(TABLE).where({ model: this.model, grant_id: grantId }).delete();
    }
  };
}

/** Rows past their expiry: nothing reads them any more. */
export function deleteExpiredOAuthRows(db: Knex, now = new Date()): Promise<number> {
  return db(TABLE).where('expires_at', '<', now).delete();
}
