// How a benchmark runs a platform process: as production does (`npm start` and the systemd units), the build in
// dist/ under plain node with MALLOC_ARENA_MAX=2 (shared/launcher/main.ts says why), not the TypeScript sources under
// tsx's loader, whose source maps make every error stack read dearer (an ECONNRESET per closed SMTP connection, say).
// The build is brought up to date once per run (`tsc -b tsconfig.build.json`: incremental, seconds when nothing
// changed). BENCH_SOURCES=1 runs the sources under tsx instead, as `npm run api` and the tests do, and as every
// figure of bench/README.md dated before 2026-11-30 04:00 UTC was measured. A benchmark's own files always run
// under tsx.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fromSources = process.env.BENCH_SOURCES === '1';
let built = false;
/** BENCH_NODE_ARGS: node's own options for every platform process (`--cpu-prof --cpu-prof-dir=/tmp/prof`: a profile
 * of each thread, worker threads included, written as it exits). */
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

/** The files the build holds: the platform's processes and what they load. */
const inBuild = (file: string) => /^(api|mta|inbound|worker|shared)\//.test(file);

/**
 * Node's arguments that run `file` (a source path relative to the root: `api/main.ts`), and what production adds to
 * its environment (nothing when the sources run).
 */
export function entry(file: string, o: { sources?: boolean } = {}): { args: string[]; env: Record<string, string> } {
  if (fromSources || o.sources || !inBuild(file))
    return { args: [...nodeArgs, '--import', 'tsx', path.join(root, file)], env: {} };
  if (!built) {
    process.stderr.write('bench: bringing the build up to date (tsc -b tsconfig.build.json)\n');
    execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.build.json'], {
      cwd: root,
      stdio: ['ignore', 2, 2],
    });
    built = true;
  }
  return {
    args: [...nodeArgs, path.join(root, 'dist', file.replace(/\.ts$/, '.js'))],
    env: { MALLOC_ARENA_MAX: '2' },
  };
}
