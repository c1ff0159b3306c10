// A platform entry point as its own process, as the launcher starts it from the sources (`node --import tsx <file>`;
// production runs the same file compiled, test/compiled.test.ts), with the environment of a test platform
// (`startPlatform().config`): the same database, Redis prefix and secrets key.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Config } from '../../shared/config.ts';
import { codePath, loaderArgs } from '../../shared/layout.ts';

export interface EntryProcess {
  pid: number;
  /** Everything it printed so far (JSON log lines). */
  output(): string;
  /** Resolves once a log line with this `msg` is printed; rejects if the process exits first or after `ms`. */
  logged(msg: string, ms?: number): Promise<void>;
  /** SIGTERM, SIGKILL after `ms`; answers the exit code. */
  stop(ms?: number): Promise<number | null>;
  /** Waits for the process to end by itself (stop() after `ms`); answers the exit code. */
  exit(ms?: number): Promise<number | null>;
}

export function envOf(config: Config, extra: Record<string, string> = {}): Record<string, string> {
  // ENV_FILE=none: a developer's .env never reaches a test's process.
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', ENV_FILE: 'none' };
  for (const [k, v] of Object.entries(config)) {
    if (v === undefined) continue;
    env[k] = Array.isArray(v) ? v.join(',') : String(v);
  }
  return { ...env, ...extra };
}

export function startEntry(file: string, config: Config, extra: Record<string, string> = {}): EntryProcess {
  const child = spawn(process.execPath, [...loaderArgs, codePath(file)], {
    env: envOf(config, { LOG_LEVEL: 'info', ...extra }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const changed = () => listeners.forEach((l) => l());
  child.stdout.on('data', (d) => ((out += d), changed()));
  child.stderr.on('data', (d) => ((out += d), changed()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => (resolve(code), changed())));
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    pid: child.pid ?? -1,
    output: () => out,
    logged(msg, ms = 30_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => done(new Error(`${file}: no "${msg}" within ${ms} ms:\n${out.slice(-2000)}`)),
          ms,
        );
        const check = () => {
          if (out.includes(`"msg":"${msg}"`)) done();
          else if (gone()) done(new Error(`${file} exited (${child.exitCode}) before "${msg}":\n${out.slice(-2000)}`));
        };
        const done = (err?: Error) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (err) reject(err);
          else resolve();
        };
        listeners.add(check);
        check();
      });
    },
    async stop(ms = 10_000) {
      if (gone()) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), ms);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async exit(ms = 10_000) {
      const timer = setTimeout(() => void this.stop(), ms);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

export const gone = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
export const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (gone(child) ? resolve() : child.once('exit', () => resolve())));

/**
 * The entry points a test file starts to kill for real: every one still running is killed by killAll (call it in
 * test.after.always), so a failed test cannot leave one behind (a live child keeps ava's worker, and the run, waiting).
 */
export class Children {
  private readonly live = new Set<ChildProcess>();

  /**
   * `file` as its own process, as the launcher starts it, with `config`'s environment and `extra` on top; stderr passed
   * on.
   */
  start(file: string, config: Config, extra: Record<string, string> = {}): ChildProcess {
    const child = spawn(process.execPath, [...loaderArgs, codePath(file)], {
      env: envOf(config, extra),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (d) => process.stderr.write(d));
    this.live.add(child);
    child.once('exit', () => this.live.delete(child));
    return child;
  }

  async killAll(): Promise<void> {
    for (const child of this.live) child.kill('SIGKILL');
    await Promise.all([...this.live].map(exited));
  }
}
