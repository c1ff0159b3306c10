// The certificate of the tests' SMTP listeners, made once per machine (docs/testing.md, "work made ahead"). Without
// TLS files an mta or inbound process, or a listener a test builds in its own process, makes a self-signed
// certificate at start (shared/tls/certificate.ts): a thread loading an X.509 stack of some 1,800 modules and an
// RSA-2048 key, about 0.6 s of CPU each, dozens of times a run. The tests' platforms name these files instead
// (SMTP_TLS_KEY_FILE, SMTP_TLS_CERT_FILE), as production names its own; the self-signed path keeps its own tests
// (lib-internals, and every process `npm start` runs in quick-start, compiled and launcher).
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { tlsCredentials } from '../../shared/tls/certificate.ts';
import { onceOnMachine } from './db.ts';

const DIR = path.join(tmpdir(), 'postwerk-test-tls');
const files = { SMTP_TLS_KEY_FILE: path.join(DIR, 'key.pem'), SMTP_TLS_CERT_FILE: path.join(DIR, 'cert.pem') };

let made: Promise<typeof files> | undefined;

/** The files: where they are, or made by the first test file to ask (the others wait on its lock). */
export function testTlsFiles(): Promise<typeof files> {
  made ??= onceOnMachine(
    424244,
    async () => (existsSync(DIR) ? files : undefined),
    async () => {
      // The directory appears whole or not at all: a run killed while writing it never renamed it.
      const partial = `${DIR}.${process.pid}`;
      await rm(partial, { recursive: true, force: true });
      await mkdir(partial, { mode: 0o700 });
      const { key, cert } = await tlsCredentials({}, 'localhost');
      await writeFile(path.join(partial, 'key.pem'), key, { mode: 0o600 });
      await writeFile(path.join(partial, 'cert.pem'), cert);
      await rename(partial, DIR);
      return files;
    },
  );
  return made;
}

/** The credentials an in-process listener takes (`tls` of the MX's and submission's servers). */
export async function testTls(): Promise<Awaited<ReturnType<typeof tlsCredentials>>> {
  return tlsCredentials(await testTlsFiles(), 'localhost');
}
