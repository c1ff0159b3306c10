// Encryption at rest for secrets we must be able to read back (DKIM private keys): AES-256-GCM under the key
// from configuration (SECRETS_KEY, or the file SECRETS_KEY_FILE that `npm start` creates on first run).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, type Config } from './config.ts';

type KeyConfig = Pick<Config, 'SECRETS_KEY' | 'SECRETS_KEY_FILE'>;

const cache = new Map<string, Buffer>();

function decodeKey(text: string, where: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new ConfigError(`${where} must be 32 bytes in base64 (openssl rand -base64 32)`);
  return key;
}

export function secretsKey(config: KeyConfig): Buffer {
  const id = config.SECRETS_KEY ?? `file:${config.SECRETS_KEY_FILE}`;
  let key = cache.get(id);
  if (!key) {
    if (config.SECRETS_KEY) key = decodeKey(config.SECRETS_KEY, 'SECRETS_KEY');
    else if (existsSync(config.SECRETS_KEY_FILE))
      key = decodeKey(readFileSync(config.SECRETS_KEY_FILE, 'utf8'), config.SECRETS_KEY_FILE);
    else
      throw new ConfigError(
        `no secrets key: set SECRETS_KEY or create ${config.SECRETS_KEY_FILE} (npm start does on first run)`,
      );
    cache.set(id, key);
  }
  return key;
}

/** First run: a fresh key file readable by its owner only. Never replaces an existing one. */
export function ensureSecretsKeyFile(config: KeyConfig): boolean {
  if (config.SECRETS_KEY || existsSync(config.SECRETS_KEY_FILE)) return false;
  mkdirSync(path.dirname(config.SECRETS_KEY_FILE), { recursive: true });
  writeFileSync(config.SECRETS_KEY_FILE, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(config.SECRETS_KEY_FILE, 0o600);
  return true;
}

/** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
export function seal(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), body]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

export function open(key: Buffer, sealed: string): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unknown sealed secret format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
