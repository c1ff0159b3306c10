// A private clamd (Debian clamav-daemon, /usr/sbin/clamd) for tests: its own config file, its own
// DatabaseDirectory holding one signature the helper writes (the EICAR test string), a unix socket (or a TCP
// port on 127.0.0.1) in a temporary directory, in the foreground. Nothing is downloaded: no freshclam, no
// official databases. No `User` line, so it runs as whoever starts it (root in CI); it needs no privilege.
// stop() and start() let a test take clamd away and bring it back at the same address.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pingClamd } from '../../shared/clamd/client.ts';
import { freePort } from './ports.ts';
import { until } from './wait.ts';

export const CLAMD = '/usr/sbin/clamd';

/** The EICAR anti-virus test file (eicar.org), kept in two halves so this source file is not itself a "virus". */
export const EICAR = ['X5O!P%@AP[4\\PZX54(P^)7CC)7}$', 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'].join('');
/** clamd reports a signature from a local database with `.UNOFFICIAL` appended. */
export const EICAR_SIGNATURE = 'Postwerk.Test.EICAR.UNOFFICIAL';

export interface Clamd {
  /** A CLAMD_ADDRESS value: the socket path, or 127.0.0.1:PORT. */
  address: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startClamd(options: { tcp?: boolean } = {}): Promise<Clamd> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-clamd-'));
  const db = path.join(dir, 'db');
  await mkdir(db);
  // An .ndb body signature (sigtool(1), "Extended signature format"): Name:TargetType(0 = any):Offset:Hex.
  await writeFile(
    path.join(db, 'postwerk-test.ndb'),
    `Postwerk.Test.EICAR:0:*:${Buffer.from(EICAR).toString('hex')}\n`,
  );
  const port = options.tcp ? await freePort() : 0;
  const socket = path.join(dir, 'clamd.sock');
  const address = options.tcp ? `127.0.0.1:${port}` : socket;
  const conf = path.join(dir, 'clamd.conf');
  await writeFile(
    conf,
    [
      'Foreground yes',
      `DatabaseDirectory ${db}`,
      ...(options.tcp ? [`TCPSocket ${port}`, 'TCPAddr 127.0.0.1'] : [`LocalSocket ${socket}`]),
      `TemporaryDirectory ${dir}`,
      `LogFile ${path.join(dir, 'clamd.log')}`,
      `PidFile ${path.join(dir, 'clamd.pid')}`,
      // Above INBOUND_MAX_MESSAGE_BYTES (40 MB): clamd refuses a longer INSTREAM.
      'StreamMaxLength 64M',
      'MaxThreads 4',
      'SelfCheck 0',
      '',
    ].join('\n'),
  );

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  async function start(): Promise<void> {
    let output = '';
    const proc = spawn(CLAMD, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
    proc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    proc.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    let gone = false;
    exited = new Promise((resolve) =>
      proc.once('exit', () => {
        gone = true;
        resolve();
      }),
    );
    proc.once('error', (err) => (output += `\n${err.message} (apt-get install clamav-daemon)`));
    child = proc;
    let last: unknown;
    try {
      await until(
        async () => {
          if (gone) throw new Error(`clamd exited (last ping: ${(last as Error | undefined)?.message})`);
          return pingClamd(address, 1000).then(
            () => true,
            (err) => {
              last = err;
              return false;
            },
          );
        },
        { what: 'clamd answering PING', timeoutMs: 30_000, intervalMs: 50 },
      );
    } catch (err) {
      const log = await readFile(path.join(dir, 'clamd.log'), 'utf8').catch(() => '');
      proc.kill('SIGKILL');
      throw new Error(`clamd did not come up (${(err as Error).message}):\n${output}\n${log}`);
    }
  }

  async function stop(): Promise<void> {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
    // A clamd killed hard leaves its socket file; the next start must find the path free.
    await rm(socket, { force: true });
  }

  await start();
  return {
    address,
    stop,
    start,
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
