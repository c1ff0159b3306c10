// DKIM keys. RSA-2048 generation costs 50-500 ms, so keys come from a pool the worker keeps filled; an empty
// pool falls back to generating inline. An Ed25519 key (RFC 8463), the optional second signature an operator
// adds (ed25519.ts), is generated when asked for: it takes well under a millisecond. Private keys are sealed with
// the secrets key before they are stored.
import { generateKeyPair, randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { seal } from '../secrets.ts';

const generate = promisify(generateKeyPair);

export interface GeneratedKey {
  algorithm: 'rsa' | 'ed25519';
  /** the `p=` value: base64 of the DER SubjectPublicKeyInfo (RSA), of the raw 32-byte public key (Ed25519) */
  public_key: string;
  private_key_sealed: string;
}

/** A new RSA-2048 key: the `p=` value (base64 of the DER SubjectPublicKeyInfo) and the PKCS#8 PEM, not sealed. */
export async function rsaKeyPair(): Promise<{ public_key: string; private_pem: string }> {
  const { publicKey, privateKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { public_key: publicKey.toString('base64'), private_pem: privateKey };
}

export async function generateRsaKey(secrets: Buffer): Promise<GeneratedKey> {
  const { public_key, private_pem } = await rsaKeyPair();
  return { algorithm: 'rsa', public_key, private_key_sealed: seal(secrets, private_pem) };
}

/**
 * RFC 8463 §4.2: the record's `p=` is the bare 32-byte public key, not a SubjectPublicKeyInfo; the SPKI of an
 * Ed25519 key (RFC 8410 §4) is a fixed 12-byte header and those 32 bytes. The private key is PKCS#8 PEM, as
 * mailauth signs with it (ed25519-sha256).
 */
export async function generateEd25519Key(secrets: Buffer): Promise<GeneratedKey> {
  const { publicKey, privateKey } = await generate('ed25519', {
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    algorithm: 'ed25519',
    public_key: publicKey.subarray(-32).toString('base64'),
    private_key_sealed: seal(secrets, privateKey),
  };
}

/** `s<yyyymm>-<4 random chars>` (CONTRACT). */
export function newSelector(now = new Date()): string {
  const month = `${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
  const chars = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `s${month}-${Array.from({ length: 4 }, () => chars[randomInt(chars.length)]).join('')}`;
}

/** A key from the pool (claimed with SKIP LOCKED, so concurrent creates never share one), or a fresh one. */
export async function takeKey(db: Knex, secrets: Buffer): Promise<GeneratedKey> {
  const [pooled] = await db('dkim_key_pool')
    .whereIn(
      'id',
      db('dkim_key_pool')
        .select('id')
        .where({ algorithm: 'rsa' })
        .orderBy('created_at')
        .limit(1)
        .forUpdate()
        .skipLocked(),
    )
    .delete()
    .returning(['algorithm', 'public_key', 'private_key_sealed']);
  return pooled ?? generateRsaKey(secrets);
}

/**
 * Tops the pool up to `target` keys (the worker's DKIM_KEY_POOL_SIZE), one at a time; an aborted `signal` (a stopping
 * worker) ends it between keys: a key takes a fraction of a second, seconds on a busy machine.
 */
export async function fillPool(db: Knex, secrets: Buffer, target: number, signal?: AbortSignal): Promise<number> {
  const [{ n }] = await db('dkim_key_pool').count({ n: '*' });
  let added = 0;
  for (let i = Number(n); i < target && !signal?.aborted; i++) {
    await db('dkim_key_pool').insert({ id: newId(), ...(await generateRsaKey(secrets)) });
    added++;
  }
  return added;
}
