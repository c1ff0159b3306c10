// A real RFC 2136 server for tests: BIND's named in the foreground on a random 127.0.0.1 port, its own working
// directory, one primary zone per test domain, updates allowed with one TSIG key (hmac-sha256). A second key
// is known to the server but may not update. Ready when it answers a query; stopped (and its directory removed)
// by close().
import { spawn, type ChildProcess } from 'node:child_process';
import { access, constants, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import net from 'node:net';
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { createResolver } from '../../shared/dns/resolver.ts';
import { until } from './wait.ts';

export interface NamedServer {
  port: number;
  /** `127.0.0.1:PORT`, a DNS_SERVERS entry. */
  address: string;
  /** May update every zone. */
  key: { name: string; secret: string };
  /** Known to the server, allowed to query, not to update. */
  readOnlyKey: { name: string; secret: string };
  /** Runs nsupdate (an independent RFC 2136 client) with the update key: `update add ...` lines for `zone`. */
  nsupdate(zone: string, lines: string[]): Promise<void>;
  close(): Promise<void>;
}

async function findExecutable(name: string): Promise<string> {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    const candidate = path.join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`${name} not found: install BIND (apt-get install bind9 bind9-dnsutils; .ci/run does)`);
}

/** A port free for both TCP and UDP on 127.0.0.1 right now. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const udp = dgram.createSocket('udp4');
  const udpFree = await new Promise<boolean>((resolve) => {
    udp.once('error', () => resolve(false));
    udp.bind(port, '127.0.0.1', () => resolve(true));
  });
  await new Promise<void>((resolve) => udp.close(() => resolve()));
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return udpFree ? port : freePort();
}

function zoneFile(zone: string, lines: string[]): string {
  return [
    '$TTL 300',
    `@ IN SOA ns.${zone}. hostmaster.${zone}. 1 3600 600 86400 300`,
    `@ IN NS ns.${zone}.`,
    'ns IN A 127.0.0.1',
    ...lines,
    '',
  ].join('\n');
}

function config(
  dir: string,
  port: number,
  zones: string[],
  key: NamedServer['key'],
  readOnly: NamedServer['key'],
): string {
  return `options {
  directory "${dir}";
  listen-on port ${port} { 127.0.0.1; };
  listen-on-v6 { none; };
  pid-file none;
  session-keyfile none;
  managed-keys-directory "${dir}";
  recursion no;
  dnssec-validation no;
  notify no;
};
controls { };
key "${key.name}" { algorithm hmac-sha256; secret "${key.secret}"; };
key "${readOnly.name}" { algorithm hmac-sha256; secret "${readOnly.secret}"; };
${zones.map((z) => `zone "${z}" { type primary; file "${z}.zone"; allow-update { key "${key.name}"; }; };`).join('\n')}
`;
}

/** `zones`: zone name → extra zone-file lines (relative owner names). */
export async function startNamed(zones: Record<string, string[]>): Promise<NamedServer> {
  const named = await findExecutable('named');
  const nsupdateBin = await findExecutable('nsupdate');
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-named-'));
  const key = { name: 'postwerk-test', secret: randomBytes(32).toString('base64') };
  const readOnlyKey = { name: 'postwerk-readonly', secret: randomBytes(32).toString('base64') };
  for (const [zone, lines] of Object.entries(zones))
    await writeFile(path.join(dir, `${zone}.zone`), zoneFile(zone, lines));
  const probeName = `ns.${Object.keys(zones)[0]}`;

  let child: ChildProcess | undefined;
  let port = 0;
  let log = '';
  // Another process may take the port between our check and named's bind: then try another one.
  for (let attempt = 0; attempt < 3 && !child; attempt++) {
    port = await freePort();
    await writeFile(path.join(dir, 'named.conf'), config(dir, port, Object.keys(zones), key, readOnlyKey));
    log = '';
    const proc = spawn(named, ['-g', '-4', '-n', '1', '-c', path.join(dir, 'named.conf')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    proc.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    const exited = new Promise<'exited'>((resolve) => proc.once('exit', () => resolve('exited')));
    const resolver = createResolver({ servers: [`127.0.0.1:${port}`], timeoutMs: 200, tries: 1 });
    // A refused datagram comes back at once: the interval paces the polls, named decides the wait.
    const ready = until(async () => (await resolver.a(probeName)).status === 'ok', {
      what: 'named answering',
      timeoutMs: 15_000,
    }).then(
      () => 'ready' as const,
      () => 'timeout' as const,
    );
    const outcome = await Promise.race([ready, exited]);
    if (outcome === 'ready') child = proc;
    else {
      proc.kill('SIGKILL');
      if (outcome === 'timeout' || !/address in use/i.test(log))
        throw new Error(`named did not start (${outcome}):\n${log}`);
    }
  }
  if (!child) throw new Error(`named found no free port:\n${log}`);
  const proc = child;

  return {
    port,
    address: `127.0.0.1:${port}`,
    key,
    readOnlyKey,
    async nsupdate(zone, lines) {
      const p = spawn(nsupdateBin, ['-y', `hmac-sha256:${key.name}:${key.secret}`], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let err = '';
      p.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      p.stdout!.on('data', (c: Buffer) => (err += c.toString()));
      p.stdin!.end([`server 127.0.0.1 ${port}`, `zone ${zone}`, ...lines, 'send', ''].join('\n'));
      const code = await new Promise<number | null>((resolve) => p.once('exit', resolve));
      if (code !== 0) throw new Error(`nsupdate failed (${code}): ${err}`);
    },
    async close() {
      if (proc.exitCode === null) {
        const gone = new Promise((resolve) => proc.once('exit', resolve));
        proc.kill('SIGTERM');
        await gone;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
