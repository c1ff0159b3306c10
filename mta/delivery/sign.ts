// DKIM signing (RFC 6376) with mailauth. An RSA-2048 signature of a 10 KB message costs ~1.4 ms of CPU with the
// parsed key kept (parsedKey below; ~2.6 ms without, ../shared/reference/benchmarks.md). Where the mta has cores to
// spare, a small pool of worker threads (sign-worker.ts) signs off the event loop; on a machine of two cores
// or fewer, which the mta shares with the api, PostgreSQL and Redis, it signs on its main thread: the threads'
// round trips and heaps cost more there than they free (the sending benchmark on two cores: the same delivered
// rate, the api's p99 at a steady 200 sends/s ~50-70 ms instead of ~700-900 ms, the mta's RSS ~210 MB instead of
// ~380 MB). MTA_SIGNING_THREADS sets it; `threads: 0` signs inline.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { Knex } from 'knex';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { dkimSignatures } from '../../shared/lib-internals/mailauth-dkim.ts';
import { open } from '../../shared/secrets.ts';
import { ensurePlatformKey, type ManagedDkimConfig } from '../../shared/domains/platform-dkim.ts';
import { startThread } from '../../shared/threads.ts';

export interface SigningKey {
  domain: string;
  selector: string;
  /** PKCS#8 PEM; the algorithm (rsa-sha256, ed25519-sha256) follows from the key. */
  privateKey: string;
}

export interface Signer {
  /** The DKIM-Signature header fields to put in front of `message` (CRLF-terminated), one per key. */
  sign(message: Buffer, keys: SigningKey[], now: Date): Promise<string>;
  close(): Promise<void>;
}

// mailauth's defaults plus the RFC 8058 §4 header (a one-click unsubscribe must be covered by the signature).
const HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-ID',
  'Content-Description',
  'In-Reply-To',
  'References',
  'List-Id',
  'List-Help',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'List-Subscribe',
  'List-Post',
  'List-Owner',
  'List-Archive',
  'Feedback-ID',
].join(':');

/** Parsed keys, by their PEM: a KeyObject is immutable, and one that has signed before signs faster. */
const parsed = new Map<string, KeyObject>();

function parsedKey(pem: string): KeyObject {
  let key = parsed.get(pem);
  if (!key) {
    key = createPrivateKey({ key: pem, format: 'pem' });
    if (parsed.size >= 1000) parsed.clear();
    parsed.set(pem, key);
  }
  return key;
}

/** The signing itself; the worker threads and the inline signer both run this. */
export async function signMessage(message: Buffer, keys: SigningKey[], signTime: number): Promise<string> {
  const dkimKeys = keys.map((k) => ({ domain: k.domain, selector: k.selector, key: parsedKey(k.privateKey) }));
  return dkimSignatures(message, dkimKeys, HEADERS, new Date(signTime));
}

interface Pending {
  resolve: (signatures: string) => void;
  reject: (err: Error) => void;
}

/** Cores beyond two, one thread each: none on a small machine (see above). */
export function defaultSigningThreads(cores = availableParallelism()): number {
  return Math.max(0, cores - 2);
}

export function createSigner(options: { threads?: number } = {}): Signer {
  const size = options.threads ?? defaultSigningThreads();
  if (size <= 0) return { sign: (m, k, now) => signMessage(m, k, now.getTime()), close: async () => {} };

  const workers: (Worker | null)[] = Array.from({ length: size }, () => null);
  const pending = new Map<number, { worker: number } & Pending>();
  let nextId = 0;
  let turn = 0;
  let closed = false;

  function spawn(slot: number): Worker {
    const worker = startThread(new URL('./sign-worker.ts', import.meta.url));
    worker.unref();
    worker.on('message', (m: { id: number; signatures?: string; error?: string }) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve(m.signatures ?? '');
    });
    const fail = (err: Error) => {
      if (workers[slot] === worker) workers[slot] = null;
      for (const [id, p] of pending) {
        if (p.worker !== slot) continue;
        pending.delete(id);
        p.reject(err);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`DKIM signing thread exited with code ${code}`)));
    workers[slot] = worker;
    return worker;
  }

  return {
    sign(message, keys, now) {
      if (keys.length === 0) return Promise.resolve('');
      if (closed) return Promise.reject(new Error('signer closed'));
      const slot = turn++ % size;
      const worker = workers[slot] ?? spawn(slot);
      const id = nextId++;
      return new Promise<string>((resolve, reject) => {
        pending.set(id, { worker: slot, resolve, reject });
        worker.postMessage({ id, message, keys, signTime: now.getTime() });
      });
    },
    async close() {
      closed = true;
      await Promise.all(workers.map((w) => w?.terminate()));
    },
  };
}

/**
 * The keys a domain signs with now: its active keys (one RSA, and an Ed25519 beside it when the domain has one,
 * RFC 8463 §4 "dual signing"). A managed domain has none of its own: it signs with platformSigningKey.
 */
export async function signingKeys(
  db: Knex,
  secrets: Buffer,
  domain: { id: string; name: string },
): Promise<SigningKey[]> {
  const rows: { selector: string; algorithm: string; private_key_sealed: string }[] = await db('dkim_keys')
    .where({ domain_id: domain.id, status: 'active' })
    .orderBy([
      { column: 'algorithm', order: 'desc' },
      { column: 'activated_at', order: 'desc' },
    ])
    .select('selector', 'algorithm', 'private_key_sealed');
  const newestPerAlgorithm = rows.filter((r, i) => rows.findIndex((o) => o.algorithm === r.algorithm) === i);
  return newestPerAlgorithm.map((r) => ({
    domain: domain.name,
    selector: r.selector,
    privateKey: open(secrets, r.private_key_sealed),
  }));
}

/**
 * The managed domains' key: the platform's, `d=` MANAGED_DOMAIN_HOST (shared/domains/platform-dkim.ts), created if
 * absent.
 */
export async function platformSigningKey(db: Knex, secrets: Buffer, config: ManagedDkimConfig): Promise<SigningKey> {
  const key = await ensurePlatformKey(db, secrets, config);
  return { domain: key.domain, selector: key.selector, privateKey: open(secrets, key.private_key_sealed) };
}
