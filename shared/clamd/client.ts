// clamd, the ClamAV daemon, as the receive job and /ready see it. CLAMD_ADDRESS is a unix socket path or
// host:port. Scans go through clamscan (INSTREAM: the bytes are streamed to clamd, no shared file system is
// needed); the readiness probe is a bare PING on a fresh connection, so /ready holds no client.
import net from 'node:net';
import { Readable } from 'node:stream';
import NodeClam from 'clamscan';

export type ClamdAddress = { path: string } | { host: string; port: number };

export interface ScanOutcome {
  infected: boolean;
  /** Signature names clamd reported (`Win.Test.EICAR_HDB-1`), empty when clean. */
  viruses: string[];
}

export interface ClamdScanner {
  address: string;
  /** Rejects when clamd cannot be reached or gives no clear answer: a scan that did not happen is no verdict. */
  scan(data: Buffer): Promise<ScanOutcome>;
}

/** A scan of a 40 MB message by a busy clamd takes seconds; a minute of silence means something is wrong. */
const SCAN_TIMEOUT_MS = 60_000;

export function parseClamdAddress(address: string): ClamdAddress {
  if (address.startsWith('/')) return { path: address };
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(address);
  if (!m) throw new Error(`CLAMD_ADDRESS must be a socket path or host:port, not ${address}`);
  return { host: m[1], port: Number(m[2]) };
}

export function createClamdScanner(address: string, timeoutMs = SCAN_TIMEOUT_MS): ClamdScanner {
  const target = parseClamdAddress(address);
  let ready: Promise<NodeClam> | undefined;
  // init() never connects (bypassTest): the inbound starts while clamd is down and scans once it is back.
  // No local fallback: a clamscan binary would load the whole signature database for every message.
  const client = () =>
    (ready ??= new NodeClam()
      .init({
        preference: 'clamdscan',
        clamscan: { active: false },
        clamdscan: {
          ...('path' in target ? { socket: target.path } : { host: target.host, port: target.port }),
          timeout: timeoutMs,
          localFallback: false,
          bypassTest: true,
        },
      })
      .catch((err) => {
        ready = undefined;
        throw err;
      }));
  return {
    address,
    async scan(data) {
      const result = await (await client()).scanStream(Readable.from([data]));
      if (result.isInfected === null) throw new Error(`clamd gave no verdict: ${result.resultString ?? 'nothing'}`);
      return { infected: result.isInfected, viruses: result.viruses };
    },
  };
}

/** Resolves when clamd answers PING with PONG within `timeoutMs`. */
export function pingClamd(address: string, timeoutMs = 2000): Promise<void> {
  const target = parseClamdAddress(address);
  return new Promise((resolve, reject) => {
    const socket = net.connect('path' in target ? { path: target.path } : { host: target.host, port: target.port });
    let answer = '';
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.setTimeout(timeoutMs, () => fail(new Error(`clamd did not answer within ${timeoutMs} ms`)));
    socket.on('error', fail);
    // The z prefix: the command and its answer are NUL-terminated (clamd(8), "COMMANDS").
    socket.on('connect', () => socket.write('zPING\0'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (!answer.includes('\0')) return;
      socket.destroy();
      if (answer.startsWith('PONG')) resolve();
      else reject(new Error(`clamd answered PING with ${JSON.stringify(answer.replace(/\0$/, '').slice(0, 100))}`));
    });
    socket.on('end', () => fail(new Error('clamd closed the connection without answering PING')));
  });
}
