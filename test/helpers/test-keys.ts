// RSA-2048 keys made once per machine for the tests' platforms (docs/testing.md, "work made ahead"): a key costs
// 150 ms or more of CPU, and the suite's platforms made hundreds (each domain a fixture adds, each database's
// managed-domain key at an mta's start). `seedKeys` puts them, sealed with the platform's own secrets key, where the
// platform looks first: the DKIM key pool (shared/domains/dkim.ts `takeKey`) and the managed domains' platform key
// (shared/domains/platform-dkim.ts). A domain made beyond the pool's keys gets a fresh one, as in production.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { rsaKeyPair } from '../../shared/domains/dkim.ts';
import { newId } from '../../shared/ids.ts';
import { seal } from '../../shared/secrets.ts';
import { onceOnMachine } from './db.ts';

/** One for the platform key and the rest for the pool: more than any test file's domains take but a few. */
const COUNT = 17;
const FILE = path.join(tmpdir(), `postwerk-test-rsa-keys-${COUNT}.json`);

type RawKey = Awaited<ReturnType<typeof rsaKeyPair>>;

let loaded: Promise<RawKey[]> | undefined;

/** The file's keys; none when it is missing or not whole (a run killed while writing it never renamed it). */
async function readKeys(): Promise<RawKey[] | undefined> {
  try {
    const keys = JSON.parse(await readFile(FILE, 'utf8')) as RawKey[];
    return keys.length === COUNT ? keys : undefined;
  } catch {
    return undefined;
  }
}

const makeKeys = (): Promise<RawKey[]> => Promise.all(Array.from({ length: COUNT }, rsaKeyPair));

/** The machine's test keys: read from the file, or made by the first file to ask (the others wait on its lock). */
function testKeys(): Promise<RawKey[]> {
  loaded ??= onceOnMachine(424243, readKeys, async () => {
    const made = await makeKeys();
    const partial = `${FILE}.${process.pid}`;
    await writeFile(partial, JSON.stringify(made), { mode: 0o600 });
    await rename(partial, FILE);
    return made;
  });
  return loaded;
}

/** The managed domains' platform key and the DKIM key pool of a new test database, sealed with `secrets`. */
export async function seedKeys(
  db: Knex,
  secrets: Buffer,
  managed: { MANAGED_DOMAIN_HOST: string; MANAGED_DKIM_SELECTOR: string },
): Promise<void> {
  const [platform, ...pool] = (await testKeys()).map((k) => ({
    algorithm: 'rsa',
    public_key: k.public_key,
    private_key_sealed: seal(secrets, k.private_pem),
  }));
  await db('platform_dkim_keys').insert({
    domain: managed.MANAGED_DOMAIN_HOST,
    selector: managed.MANAGED_DKIM_SELECTOR,
    ...platform,
  });
  await db('dkim_key_pool').insert(pool.map((k) => ({ id: newId(), ...k })));
}
