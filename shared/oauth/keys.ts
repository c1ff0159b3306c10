// The authorization server's signing keys (its JWKS): made once, on first start, and kept in PostgreSQL sealed under
// the secrets key (shared/secrets.ts), as DKIM keys are. Every api copy reads the same keys.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { open, seal } from '../secrets.ts';

export type PrivateJwk = Record<string, unknown> & { kid: string };

function newKey(): PrivateJwk {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

/** The JWKS, the key made and stored first when there is none (two copies starting together keep one). */
export async function signingKeys(db: Knex, secrets: Buffer): Promise<{ keys: PrivateJwk[] }> {
  let rows = await db('oauth_signing_keys').orderBy('created_at').select('jwk_sealed');
  if (rows.length === 0) {
    const key = newKey();
    await db.transaction(async (trx) => {
      // One writer: the second copy waits here and then finds the first one's key.
      await trx.raw('lock table oauth_signing_keys in exclusive mode');
      const existing = await trx('oauth_signing_keys').first('kid');
      if (!existing)
        await trx('oauth_signing_keys').insert({ kid: key.kid, jwk_sealed: seal(secrets, JSON.stringify(key)) });
    });
    rows = await db('oauth_signing_keys').orderBy('created_at').select('jwk_sealed');
  }
  return { keys: rows.map((r) => JSON.parse(open(secrets, r.jwk_sealed)) as PrivateJwk) };
}
