// DKIM keys. RSA-2048 generation costs 50-500 ms, so keys come from a pool the worker keeps filled; an empty
// pool falls back to generating inline. Private keys are sealed with the secrets key before they are stored.
import { generateKeyPair, randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { seal } from '../secrets.ts';

const generate = promisify(generateKeyPair);

export const POOL_TARGET = 20;

export interface GeneratedKey {
  algorithm: 'rsa';
  /** base64 of the DER SubjectPublicKeyInfo: the `p=` value */
  public_key: string;
  private_key_sealed: string;
}

export async function generateRsaKey(secrets: Buffer): Promise<GeneratedKey> {
  const { publicKey, privateKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { algorithm: 'rsa', public_key: publicKey.toString('base64'), private_key_sealed: seal(secrets, privateKey) };
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
    .whereIn('id', db('dkim_key_pool').select('id').where({ algorithm: 'rsa' }).orderBy('created_at').limit(1).forUpdate().skipLocked())
    .delete()
    .returning(['algorithm', 'public_key', 'private_key_sealed']);
  return pooled ?? generateRsaKey(secrets);
}

export async function fillPool(db: Knex, secrets: Buffer, target = POOL_TARGET): Promise<number> {
  const [{ n }] = await db('dkim_key_pool').count({ n: '*' });
  let added = 0;
  for (let i = Number(n); i < target; i++) {
    await db('dkim_key_pool').insert({ id: newId(), ...(await generateRsaKey(secrets)) });
    added++;
  }
  return added;
}
