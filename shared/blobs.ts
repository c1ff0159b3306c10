// The blob store: raw messages, attachments, uploads. Filesystem by default; a write is durable (fsync of the
// file, of its directory, and of the parent of every directory the put had to create) before put() resolves, so
// "stored" means it survives a crash.
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

export interface BlobStore {
  put(key: string, data: Buffer): Promise<void>;
  /**
   * Writes what `source` yields, chunk by chunk (never the whole in memory), as durably as put(); answers the bytes
   * written. If `source` fails (a limit it enforces, a client gone) nothing is left under `key` or beside it.
   */
  putStream(key: string, source: Readable): Promise<number>;
  get(key: string): Promise<Buffer | null>;
  /** The object as a stream of chunks, or null when there is none. */
  getStream(key: string): Promise<Readable | null>;
  size(key: string): Promise<number | null>;
  delete(key: string): Promise<void>;
  /**
   * The objects under the folder `prefix` (at any depth) with their last change, unfinished writes' temporary
   * files (`<key>.<hex>.tmp`) included: for sweeps of what no row names. Empty when the folder does not exist.
   */
  list(prefix: string): Promise<{ key: string; modified: Date }[]>;
  /** Writes, reads back and removes a probe object: the readiness check. */
  check(): Promise<void>;
}

const KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

async function fsyncDir(dir: string) {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes `dir` (and its missing parents) durable once per process. */
async function ensureDir(made: Set<string>, dir: string) {
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
}

/** A temporary file beside `target` (opened for writing), its directory made first. */
async function openTemp(made: Set<string>, target: string): Promise<{ tmp: string; handle: FileHandle }> {
  const dir = path.dirname(target);
  await ensureDir(made, dir);
  const tmp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    return { tmp, handle: await open(tmp, 'w') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !made.delete(dir)) throw err;
    return openTemp(made, target);
  }
}

/** Syncs and closes the temporary file, then renames it into place and syncs the directory. */
async function commit(tmp: string, handle: FileHandle, target: string) {
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, target);
  await fsyncDir(path.dirname(target));
}

export function createFsBlobStore(root: string): BlobStore {
  const base = path.resolve(root);
  const file = (key: string) => {
    if (!KEY.test(key) || key.split('/').some((p) => p === '..' || p === '.')) throw new Error(`bad blob key: ${key}`);
    return path.join(base, key);
  };

  // Directories this process made (or found): a put into one skips mkdir. One removed behind our back makes
  // that put fail once (ENOENT), forgets it and retries.
  const made = new Set<string>();

  const store: BlobStore = {
    async put(key, data) {
      const target = file(key);
      const { tmp, handle } = await openTemp(made, target);
      try {
        await handle.writeFile(data);
      } catch (err) {
        await handle.close();
        await rm(tmp, { force: true });
        throw err;
      }
      await commit(tmp, handle, target);
    },
    async putStream(key, source) {
      const target = file(key);
      const { tmp, handle } = await openTemp(made, target);
      let bytes = 0;
      try {
        await pipeline(source, async (chunks: AsyncIterable<Buffer>) => {
          for await (const chunk of chunks) {
            bytes += chunk.length;
            await handle.write(chunk);
          }
        });
      } catch (err) {
        await handle.close();
        await rm(tmp, { force: true });
        throw err;
      }
      await commit(tmp, handle, target);
      return bytes;
    },
    async getStream(key) {
      const target = file(key);
      try {
        await stat(target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
      return createReadStream(target, { highWaterMark: 256 * 1024 });
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
    async list(prefix) {
      const dir = file(prefix);
      let names: string[];
      try {
        names = await readdir(dir, { recursive: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw err;
      }
      const found: { key: string; modified: Date }[] = [];
      for (const name of names) {
        const info = await stat(path.join(dir, name)).catch(() => null);
        if (info?.isFile()) found.push({ key: `${prefix}/${name.split(path.sep).join('/')}`, modified: info.mtime });
      }
      return found;
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
