// One-time secrets of the accounts area (mailed tokens, session tokens, MFA challenges, recovery codes): random,
// stored only as their SHA-256 (as API keys are), looked up by that hash, so no secret is ever compared in our code.
import { randomBase62, sha256Hex } from '../tokens.ts';

/** A fresh token (32 random bytes, base62, `prefix` before it) and the hash that is stored. */
export function newSecret(prefix = ''): { token: string; hash: string } {
  const token = prefix + randomBase62(32);
  return { token, hash: sha256Hex(token) };
}

export function hashSecret(token: string): string {
  return sha256Hex(token);
}
