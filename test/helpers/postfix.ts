// Postfix as a receiving MTA for tests: its own instance (config, queue and log in a temporary directory),
// listening on `host:port`, acting as the MX of `domain`: it accepts the recipients listed in `known` (others
// get Postfix's own "550 5.1.1 ... User unknown in relay recipient table"), answers the scripted refusals of
// `access`, offers STARTTLS, and relays what it accepts to `relayTo` (a sink), so a test sees what a real MTA
// received. Needs root and the postfix package (apt-get install postfix; .ci/run does).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { access, chmod, constants, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import { until } from './wait.ts';

const run = promisify(execFile);

export interface PostfixOptions {
  host: string;
  port: number;
  domain: string;
  known: string[];
  /** Recipient → the refusal smtpd answers for it (`450 4.2.1 ...`). */
  access?: Record<string, string>;
  relayTo: { host: string; port: number };
  messageSizeLimit?: number;
  /** More transport_maps entries: a domain or address → `smtp:[host]:port` (where its own bounces go, say). */
  transports?: Record<string, string>;
  /** More main.cf lines (`delay_warning_time = 1s`). */
  mainCf?: string[];
}

export interface Postfix {
  dir: string;
  log(): Promise<string>;
  close(): Promise<void>;
}

/** main.cf lines that make `dir` a private Postfix instance (its own queue, data and log; bench/ uses it too). */
export function instanceMainCf(dir: string): string[] {
  return [
    'compatibility_level = 3.6',
    `queue_directory = ${dir}/spool`,
    `data_directory = ${dir}/data`,
    `maillog_file = ${dir}/maillog`,
    `maillog_file_prefixes = ${dir}`,
    'command_directory = /usr/sbin',
    'daemon_directory = /usr/lib/postfix/sbin',
    'meta_directory = /etc/postfix',
    'shlib_directory = /usr/lib/postfix',
    'mail_owner = postfix',
    'setgid_group = postdrop',
  ];
}

/** master.cf of a private instance: its smtpd on `listen` only, the usual daemons (bench/ uses it too). */
export const MASTER_CF = (listen: string) => `
${listen} inet n - n - - smtpd
pickup unix n - n 60 1 pickup
cleanup unix n - n - 0 cleanup
qmgr unix n - n 300 1 qmgr
tlsmgr unix - - n 1000? 1 tlsmgr
rewrite unix - - n - - trivial-rewrite
bounce unix - - n - 0 bounce
defer unix - - n - 0 bounce
trace unix - - n - 0 bounce
verify unix - - n - 1 verify
flush unix n - n 1000? 0 flush
proxymap unix - - n - - proxymap
smtp unix - - n - - smtp
relay unix - - n - - smtp
showq unix n - n - - showq
error unix - - n - - error
retry unix - - n - - error
discard unix - - n - - discard
local unix - n n - - local
anvil unix - - n - 1 anvil
scache unix - - n - 1 scache
postlog unix-dgram n - n - 1 postlogd
`;

export async function postfixBinary(): Promise<string> {
  for (const candidate of ['/usr/sbin/postfix', '/usr/local/sbin/postfix']) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error('postfix not found: apt-get install postfix (.ci/run does)');
}

/** Resolves once something accepts connections at host:port (Postfix's master opens its listener). */
async function listening(host: string, port: number, ms = 10_000): Promise<void> {
  await until(
    () =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect(port, host, () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      }),
    { what: `postfix listening on ${host}:${port}`, timeoutMs: ms, intervalMs: 50 },
  );
}

export async function startPostfix(o: PostfixOptions): Promise<Postfix> {
  const postfix = await postfixBinary();
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-postfix-'));
  await chmod(dir, 0o755);
  const pems = await generate([{ name: 'commonName', value: `mx.${o.domain}` }], { keySize: 2048 } as never);
  await writeFile(path.join(dir, 'key.pem'), pems.private, { mode: 0o600 });
  await writeFile(path.join(dir, 'cert.pem'), pems.cert);
  await writeFile(path.join(dir, 'recipients'), o.known.map((a) => `${a} ok`).join('\n') + '\n');
  await writeFile(
    path.join(dir, 'access'),
    Object.entries(o.access ?? {})
      .map(([a, r]) => `${a} ${r}`)
      .join('\n') + '\n',
  );
  const transports = { [o.domain]: `smtp:[${o.relayTo.host}]:${o.relayTo.port}`, ...o.transports };
  await writeFile(
    path.join(dir, 'transport'),
    Object.entries(transports)
      .map(([k, v]) => `${k} ${v}`)
      .join('\n') + '\n',
  );
  await writeFile(
    path.join(dir, 'main.cf'),
    [
      ...instanceMainCf(dir),
      `myhostname = mx.${o.domain}`,
      'mydestination =',
      'inet_protocols = ipv4',
      // Nobody is trusted: our MTA is an outside client like any other.
      'mynetworks = 127.0.0.254/32',
      `relay_domains = ${o.domain}`,
      `relay_recipient_maps = texthash:${dir}/recipients`,
      `transport_maps = texthash:${dir}/transport`,
      `smtpd_recipient_restrictions = check_recipient_access texthash:${dir}/access, permit`,
      'smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination',
      'smtpd_peername_lookup = no',
      'smtpd_tls_security_level = may',
      `smtpd_tls_chain_files = ${dir}/key.pem, ${dir}/cert.pem`,
      'smtp_tls_security_level = none',
      'smtp_dns_support_level = disabled',
      'biff = no',
      `message_size_limit = ${o.messageSizeLimit ?? 10240000}`,
      'alias_maps =',
      'alias_database =',
      'local_recipient_maps =',
      ...(o.mainCf ?? []),
      '',
    ].join('\n'),
  );
  await writeFile(path.join(dir, 'master.cf'), MASTER_CF(`${o.host}:${o.port}`));
  // Postfix creates the queue's subdirectories and its data directory with their owners.
  await mkdir(path.join(dir, 'spool'), { mode: 0o755 });
  await run(postfix, ['-c', dir, 'set-permissions', 'create-missing']);
  await run(postfix, ['-c', dir, 'start']);
  await listening(o.host, o.port);
  return {
    dir,
    log: () => readFile(path.join(dir, 'maillog'), 'utf8').catch(() => ''),
    async close() {
      await run(postfix, ['-c', dir, 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
