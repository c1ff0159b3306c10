// OpenDKIM as an independent DKIM verifier: `opendkim-testmsg` (Debian opendkim-tools) runs libopendkim, which
// shares no code with our signer, mailauth or dkimpy. It takes no configuration file, so its keys come the real
// way, through DNS: libopendkim asks the system resolver (res_query: /etc/resolv.conf, port 53 only). The
// verifier therefore runs in a mount namespace of its own (unshare) where /etc/resolv.conf names a loopback DNS
// server of its own, on port 53 of a random address in 127/8, serving the TXT records given. Binding port 53 and
// unsharing need root, as CI runs (.ci/run).
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startDnsServer } from './dns-server.ts';

export const OPENDKIM_TESTMSG = '/usr/sbin/opendkim-testmsg';

export interface OpendkimVerdict {
  pass: boolean;
  /** What opendkim-testmsg printed (nothing when the signature verified). */
  output: string;
}

async function runInNamespace(resolvConf: string, raw: Buffer): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // The bind mount lives and dies with the namespace: the host's resolv.conf is never touched.
    const child = spawn(
      'unshare',
      [
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount --bind "$1" /etc/resolv.conf && exec "$2"',
        'sh',
        resolvConf,
        OPENDKIM_TESTMSG,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', (err) =>
      reject(new Error(`opendkim-testmsg could not run (apt-get install opendkim-tools; needs root): ${err.message}`)),
    );
    child.on('close', (code) => resolve({ code, output: output.trim() }));
    child.stdin.on('error', () => {}); // an early exit is reported by `close`
    child.stdin.end(raw);
  });
}

/** The message with only its `index`-th DKIM-Signature kept, so each signature is judged on its own. */
export function keepOneSignature(raw: Buffer, index: number): Buffer {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = text.slice(0, end + 2);
  const fields = head.split(/\r\n(?![ \t])/).filter(Boolean);
  let seen = -1;
  const kept = fields.filter((f) => !/^dkim-signature:/i.test(f) || ++seen === index);
  return Buffer.from(`${kept.join('\r\n')}\r\n${text.slice(end + 2)}`, 'latin1');
}

/** The signing domain (d=) and selector (s=) of each DKIM-Signature, in header order. */
export function signatureKeys(raw: Buffer): { domain: string; selector: string }[] {
  const text = raw.toString('latin1');
  const fields = text
    .slice(0, text.indexOf('\r\n\r\n'))
    .split(/\r\n(?![ \t])/)
    .filter((f) => /^dkim-signature:/i.test(f));
  return fields.map((f) => {
    const tags = new Map(
      f
        .slice(f.indexOf(':') + 1)
        .replace(/\s+/g, '')
        .split(';')
        .map((t) => [t.slice(0, t.indexOf('=')), t.slice(t.indexOf('=') + 1)]),
    );
    return { domain: (tags.get('d') ?? '').toLowerCase(), selector: tags.get('s') ?? '' };
  });
}

/**
 * opendkim-testmsg's verdict on each DKIM-Signature of `raw` (in header order), each verified alone, with the
 * TXT records given (name → value) served over DNS.
 */
export async function opendkimVerify(raw: Buffer, records: Record<string, string>): Promise<OpendkimVerdict[]> {
  const host = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
  const dns = await startDnsServer({ host, port: 53 });
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-opendkim-'));
  try {
    for (const [name, value] of Object.entries(records)) dns.set(name, 'TXT', [value]);
    const conf = path.join(dir, 'resolv.conf');
    await writeFile(conf, `nameserver ${host}\noptions timeout:5 attempts:3\n`);
    const verdicts: OpendkimVerdict[] = [];
    for (let i = 0; i < signatureKeys(raw).length; i++) {
      const { code, output } = await runInNamespace(conf, keepOneSignature(raw, i));
      verdicts.push({ pass: code === 0 && output === '', output: output || (code === 0 ? '' : `exit ${code}`) });
    }
    return verdicts;
  } finally {
    await dns.close();
    await rm(dir, { recursive: true, force: true });
  }
}
