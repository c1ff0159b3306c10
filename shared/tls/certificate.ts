// The TLS certificate of our SMTP listeners: the operator's files when configured, otherwise a self-signed
// one made at start (fine for opportunistic STARTTLS and for tests; submission clients must then skip
// verification, so production sets the files).
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

export interface TlsFiles {
  SMTP_TLS_KEY_FILE?: string;
  SMTP_TLS_CERT_FILE?: string;
}

export async function tlsCredentials(
  config: TlsFiles,
  hostname: string,
): Promise<{ key: string; cert: string; selfSigned: boolean }> {
  if (config.SMTP_TLS_KEY_FILE && config.SMTP_TLS_CERT_FILE) {
    return {
      key: readFileSync(config.SMTP_TLS_KEY_FILE, 'utf8'),
      cert: readFileSync(config.SMTP_TLS_CERT_FILE, 'utf8'),
      selfSigned: false,
    };
  }
  return { ...(await selfSigned(hostname)), selfSigned: true };
}

/**
 * A self-signed certificate for `hostname` (and 127.0.0.1), made by selfsigned in a worker thread of its own. The
 * library and its X.509/ASN.1 stack (some 1,800 modules, ~7 MB of heap) serve once, at start; a thread's heap is
 * returned when the thread ends, so the mta does not carry them for as long as it runs (the inbound keeps the
 * X.509 stack anyway: mailauth's BIMI check loads it). The thread's code is plain JavaScript importing the library
 * by its resolved URL, the same from the sources and the build.
 */
function selfSigned(hostname: string): Promise<{ key: string; cert: string }> {
  const attributes = [{ name: 'commonName', value: hostname }];
  const options = {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: hostname },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  };
  const code = `
    Promise.all([import('node:worker_threads'), import(${JSON.stringify(import.meta.resolve('selfsigned'))})])
      .then(async ([{ parentPort, workerData }, { generate }]) => {
        const pems = await generate(workerData.attributes, workerData.options);
        parentPort.postMessage({ key: pems.private, cert: pems.cert });
      });`;
  const worker = new Worker(code, { eval: true, workerData: { attributes, options } });
  return new Promise<{ key: string; cert: string }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (exitCode) => reject(new Error(`certificate thread exited with code ${exitCode}`)));
  }).finally(() => worker.terminate());
}
