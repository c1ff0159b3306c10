// The TLS certificate of our SMTP listeners: the operator's files when configured, otherwise a self-signed
// one made at start (fine for opportunistic STARTTLS and for tests; submission clients must then skip
// verification, so production sets the files).
import { readFileSync } from 'node:fs';
import { generate } from 'selfsigned';

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
  const pems = await generate([{ name: 'commonName', value: hostname }], {
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
  } as never);
  return { key: pems.private, cert: pems.cert, selfSigned: true };
}
