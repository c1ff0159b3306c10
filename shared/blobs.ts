// The blob store: raw messages, attachments, uploads. Filesystem by default; a write is durable (fsync of the
// file, of its directory, and of the parent of every directory the put had to create) before put() resolves, so
// "stored" means it survives a crash.
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

export interface BlobStore {
  put(key: string, data: Buffer): Promise<void>;
  get(key: string): Promise<Buffer | null>;
  size(key: string): Promise<number | null>;
  delete(key: string): Promise<void>;
  /** Writes, reads back and removes a probe object: the readiness check. */
  check(): Promise<void>;
}

const KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

export function createFsBlobStore(root: string): BlobStore {
  const base = path.resolve(root);
  const file = (key: string) => {
    if (!KEY.test(key) || key.split('/').some((p) => p === '..' || p === '.')) throw new Error(`bad blob key: ${key}`);
    return path.join(base, key);
  };

  // Directories this process made (or found): a put into one skips mkdir. One removed behind our back makes
  // that put fail once (ENOENT), forgets it and retries.
  const made = new Set<string>();

  async function fsyncDir(dir: string) {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  const store: BlobStore = {
    async put(key, data) {
      const target = file(key);
      const dir = path.dirname(target);
      if (!made.has(dir)) {
        // A directory made here is itself an entry in its parent: without an fsync of that parent a crash may lose
        // the directory, and the file in it with it, although the file and its directory were synced.
        const first = await mkdir(dir, { recursive: true });
        if (first) {
          const parents: string[] = [];
          for (let d = dir; ; d = path.dirname(d)) {
            parents.push(path.dirname(d));
            if (d === first || d === path.dirname(d)) break;
          }
          for (const parent of parents) await fsyncDir(parent);
        }
        if (made.size > 10_000) made.clear();
        made.add(dir);
      }
      const tmp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
      let handle;
      try {
        handle = await open(tmp, 'w');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !made.delete(dir)) throw err;
        return store.put(key, data);
      }
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, target);
      await fsyncDir(dir);
    },
    async get(key) {
      try {
        return await readFile(file(key));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },
    async size(key) {
      try {
        return (await stat(file(key))).size;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },
    async delete(key) {
      await rm(file(key), { force: true });
    },
    async check() {
      // Writable and readable, without the fsyncs of put(): readiness must stay cheap on a busy disk.
      const target = file(`_probe/${process.pid}-${randomBytes(4).toString('hex')}`);
      const payload = Buffer.from('probe');
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, payload);
      const back = await readFile(target);
      await rm(target, { force: true });
      if (!back.equals(payload)) throw new Error('blob store read back a different value');
    },
  };
  return store;
}
