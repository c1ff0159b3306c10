// The peer side of the sending suite (bench/sending.ts): Postfix's smtp-sink as the one loopback sink every
// side delivers to (its -c counters say how many messages it has taken), smtp-source as the load generator,
// and a private Postfix instance relaying into the sink (its own config, queue and log directory, a listener on
// 127.0.0.1 only), as benchmarks.md's peer commands run it. Needs the postfix package (it ships smtp-sink and
// smtp-source) and root, like test/helpers/postfix.ts.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { instanceMainCf, MASTER_CF } from '../test/helpers/postfix.ts';
import { freePort } from '../test/helpers/ports.ts';

export { freePort };

const run = promisify(execFile);

export const SMTP_SINK = '/usr/sbin/smtp-sink';
export const SMTP_SOURCE = '/usr/sbin/smtp-source';
export const POSTFIX = '/usr/sbin/postfix';

/** A port the kernel just handed out and we released (the same trick as bench/servers.ts). */
/** Throws a plain sentence when the postfix package is missing (spawn's ENOENT would otherwise crash the run). */
export function requirePostfixTools(): void {
  const missing = [SMTP_SINK, SMTP_SOURCE, POSTFIX].filter((p) => !existsSync(p));
  if (missing.length)
    throw new Error(
      `${missing.join(', ')} not found: install the postfix package (apt-get install postfix; .ci/run does)`,
    );
}

/** Resolves once something accepts TCP connections at 127.0.0.1:port. */
export async function listening(port: number, ms = 30_000, alive: () => boolean = () => true): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (!alive()) throw new Error(`the process meant to listen on 127.0.0.1:${port} exited`);
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export interface Sink {
  port: number;
  pid: number;
  /** Messages the sink has received so far (its `mesg=` counter: one per "." it answered). */
  count(): number;
  /** Resolves with the time (performance.now()) at which count() first reached `n`, or undefined after `ms`. */
  waitFor(n: number, ms: number): Promise<number | undefined>;
  close(): Promise<void>;
}

/** `smtp-sink -c`: answers 250 to everything, no STARTTLS, up to 256 sessions at once, counters on stdout. */
export async function startSink(): Promise<Sink> {
  requirePostfixTools();
  const port = await freePort();
  const child = spawn(SMTP_SINK, ['-c', '-u', 'nobody', `127.0.0.1:${port}`, '1000'], { stdio: ['ignore', 'pipe', 2] });
  let messages = 0;
  let tail = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    // "sess=N quit=N mesg=N\r", rewritten in place; keep only the end of the text seen.
    tail = (tail + chunk).slice(-200);
    const all = [...tail.matchAll(/mesg=(\d+)/g)];
    if (all.length) messages = Math.max(messages, Number(all[all.length - 1][1]));
  });
  await listening(port, 10_000, () => child.exitCode === null);
  return {
    port,
    pid: child.pid ?? -1,
    count: () => messages,
    async waitFor(n, ms) {
      const deadline = performance.now() + ms;
      while (messages < n) {
        if (performance.now() > deadline) return undefined;
        await new Promise((r) => setTimeout(r, 5));
      }
      return performance.now();
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

export interface SourceOptions {
  port: number;
  messages: number;
  sessions: number;
  /** Reuse each connection for many messages (smtp-source -d). */
  reuse: boolean;
  bytes: number;
  /** Envelope sender and recipient (smtp-source -f / -t); a@bench-source.test and b@bench-sink.test unless given. */
  from?: string;
  to?: string;
}

/** Runs smtp-source to completion; answers its wall time in ms. smtp-source exits non-zero on an SMTP error. */
export async function smtpSource(o: SourceOptions): Promise<number> {
  const args = [
    ...(o.reuse ? ['-d'] : []),
    '-s',
    String(o.sessions),
    '-l',
    String(o.bytes),
    '-m',
    String(o.messages),
    '-f',
    o.from ?? 'a@bench-source.test',
    '-t',
    o.to ?? 'b@bench-sink.test',
    `127.0.0.1:${o.port}`,
  ];
  const t0 = performance.now();
  await run(SMTP_SOURCE, args, { maxBuffer: 16 * 1024 * 1024 });
  return performance.now() - t0;
}

export interface PostfixRelay {
  port: number;
  dir: string;
  /** The master process: every other Postfix process of the instance is its child. */
  masterPid: number;
  /** Sum of VmRSS over the master and its children right now, in kB (shared pages counted in each). */
  rssKb(): number;
  /** Files left in incoming/active/maildrop/deferred/hold: 0 once the queue has drained. */
  queued(): Promise<number>;
  log(): Promise<string>;
  close(): Promise<void>;
}

/**
 * Postfix 3.7 as a relay: everything from 127.0.0.0/8 to relayhost=[127.0.0.1]:<sink>, 20 sessions to it.
 * `extraMainCf`: more main.cf lines (parameters not set above), e.g. the inbound suite's hold on every message.
 */
export async function startPostfixRelay(sinkPort: number, extraMainCf: string[] = []): Promise<PostfixRelay> {
  requirePostfixTools();
  const port = await freePort();
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-bench-postfix-'));
  const close = async () => {
    await run(POSTFIX, ['-c', dir, 'stop']).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await chmod(dir, 0o755);
    await writeFile(
      path.join(dir, 'main.cf'),
      [
        ...instanceMainCf(dir),
        // benchmarks.md's peer command, with the instance's own listener (master.cf) instead of port 25.
        'myhostname = bench.localdomain',
        'mydestination =',
        'inet_protocols = ipv4',
        'mynetworks = 127.0.0.0/8',
        `relayhost = [127.0.0.1]:${sinkPort}`,
        'smtpd_relay_restrictions = permit_mynetworks, reject',
        'smtpd_forbid_bare_newline = yes',
        'smtpd_forbid_unauth_pipelining = yes',
        'default_destination_concurrency_limit = 20',
        // No reverse lookup of 127.0.0.1 and no DNS for the relayhost: this machine has loopback only.
        'smtpd_peername_lookup = no',
        'smtp_dns_support_level = disabled',
        'smtp_tls_security_level = none',
        'biff = no',
        'alias_maps =',
        'alias_database =',
        'local_recipient_maps =',
        ...extraMainCf,
        '',
      ].join('\n'),
    );
    await writeFile(path.join(dir, 'master.cf'), MASTER_CF(`127.0.0.1:${port}`));
    await mkdir(path.join(dir, 'spool'), { mode: 0o755 });
    await run(POSTFIX, ['-c', dir, 'set-permissions', 'create-missing']);
    await run(POSTFIX, ['-c', dir, 'start']);
    await listening(port, 10_000);
  } catch (err) {
    await close();
    throw err;
  }
  const masterPid = async () => Number((await readFile(path.join(dir, 'spool/pid/master.pid'), 'utf8')).trim());
  const master = await masterPid();
  return {
    port,
    dir,
    masterPid: master,
    rssKb: () => postfixRssKb(master),
    async queued() {
      let n = 0;
      for (const q of ['incoming', 'active', 'maildrop', 'deferred', 'hold'])
        n += await countFiles(path.join(dir, 'spool', q));
      return n;
    },
    log: () => readFile(path.join(dir, 'maillog'), 'utf8').catch(() => ''),
    close,
  };
}

async function countFiles(d: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
    n += e.isDirectory() ? await countFiles(path.join(d, e.name)) : 1;
  }
  return n;
}

function status(pid: number | string): { ppid: number; rssKb: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    return { ppid: Number(/^PPid:\s+(\d+)/m.exec(text)?.[1]), rssKb: Number(/^VmRSS:\s+(\d+)/m.exec(text)?.[1] ?? 0) };
  } catch {
    return undefined;
  }
}

/** The master's RSS plus that of every process it started (smtpd, cleanup, qmgr, smtp, ...). */
function postfixRssKb(master: number): number {
  let kb = status(master)?.rssKb ?? 0;
  for (const pid of readdirSyncSafe('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const s = status(pid);
    if (s && s.ppid === master) kb += s.rssKb;
  }
  return kb;
}

function readdirSyncSafe(d: string): string[] {
  try {
    return readdirSync(d);
  } catch {
    return [];
  }
}
/** Samples `read()` every 50 ms until stopped; answers the highest value seen. */
export function peakSampler(read: () => number): { stop(): number } {
  let peak = read();
  const timer = setInterval(() => {
    peak = Math.max(peak, read());
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, read());
    },
  };
}
