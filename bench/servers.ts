// Starts a server in its own node process (the build, as production runs it; bench/entry.ts), on a port picked
// here, and waits until it answers HTTP. A separate process keeps the load generator off the
// server's event loop and lets RSS and CPU be read per server.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/ports.ts';
import { exited, listening } from './sending-peers.ts';
import { entry } from './entry.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Every process a benchmark starts serves its metrics (as in production) on a port the kernel picks. */
export const METRICS_ON_FREE_PORTS = {
  METRICS_API_PORT: '0',
  METRICS_MTA_PORT: '0',
  METRICS_INBOUND_PORT: '0',
  METRICS_WORKER_PORT: '0',
  // Not metrics, but a listener of the api all the same (docs/tracking.md): a bench's api must not need port 3001.
  TRACKING_PORT: '0',
};

/**
 * A platform process (`file`: `api/main.ts`, `worker/main.ts`...) as production runs it (bench/entry.ts), with `env`
 * over this process's environment and its metrics on free ports.
 */
export function spawnPlatform(
  file: string,
  env: Record<string, string>,
  stdio: StdioOptions,
  o: { sources?: boolean } = {},
): ChildProcess {
  const run = entry(file, o);
  // node-postgres names its connections by PGAPPNAME: pg_stat_activity tells the processes' connections apart.
  const PGAPPNAME = file.split('/')[0];
  return spawn(process.execPath, run.args, {
    cwd: repoRoot,
    env: { ...process.env, ...run.env, ...METRICS_ON_FREE_PORTS, PGAPPNAME, ...env },
    stdio,
  });
}

export interface ChildServer {
  name: string;
  pid: number;
  url: string;
  /** SIGTERM, then SIGKILL if it has not exited within two seconds. Safe to call twice. */
  stop(): Promise<void>;
}

/** Every server started and not yet stopped, so cleanup can reach one still starting up. */
const running = new Set<ChildServer>();

export async function stopAllServers(): Promise<void> {
  await Promise.allSettled([...running].map((s) => s.stop()));
}

/**
 * Runs `file` (relative to the repository root) with `env` on top of ours plus PORT, and resolves once any
 * HTTP answer comes back from it. Its stdout and stderr go to our stderr so the tables on stdout stay clean.
 * `sources`: the TypeScript under tsx even where the build exists (a comparison with a bench file, which has no build).
 */
export async function startServer(
  name: string,
  file: string,
  env: Record<string, string>,
  o: { sources?: boolean } = {},
): Promise<ChildServer> {
  const port = await freePort();
  const child = spawnPlatform(file, { ...env, PORT: String(port) }, ['ignore', 2, 2], o);
  const url = `http://127.0.0.1:${port}`;
  const server: ChildServer = {
    name,
    pid: child.pid ?? -1,
    url,
    async stop() {
      running.delete(server);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited(child);
      clearTimeout(timer);
    },
  };
  running.add(server);
  let exitedEarly = false;
  void exited(child).then(() => (exitedEarly = true));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exitedEarly) throw new Error(`${name} (${file}) exited before it listened (code ${child.exitCode})`);
    try {
      // Any status will do: it only shows the server is listening.
      const res = await fetch(`${url}/`, { headers: { 'user-agent': 'postwerk-bench/1.0' } });
      await res.arrayBuffer();
      return server;
    } catch {
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`${name} (${file}) did not answer within 30 s`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export interface MtaProcess {
  pid: number;
  stop(): Promise<void>;
}

/**
 * The mta as a process of its own on `env` (over this process's environment, metrics on free ports), stopped at
 * cleanup. It has no HTTP listener: it is up once its submission port accepts connections.
 */
export async function spawnMta(
  env: Record<string, string>,
  submissionPort: number,
  onCleanup: (step: () => Promise<unknown>) => void,
): Promise<MtaProcess> {
  const child = spawnPlatform('mta/main.ts', env, ['ignore', 2, 2]);
  const mta = {
    pid: child.pid ?? -1,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      // Ten seconds for the deliveries in hand to record their outcome, as a real stop gives them.
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(timer);
    },
  };
  onCleanup(() => mta.stop());
  // 120 s: on a loaded machine the start (tsx) alone can take tens of seconds.
  await listening(submissionPort, 120_000, () => child.exitCode === null && child.signalCode === null);
  return mta;
}
