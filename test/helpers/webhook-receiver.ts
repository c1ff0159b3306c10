// A customer's webhook endpoint on loopback: records every request with its raw body and answers from a script
// (one status per request in turn, then the last one again), so tests verify signatures as a customer would.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Statuses to answer, in turn; the last repeats. */
  script: number[];
  /** Wait this long before answering (a slow endpoint). */
  delayMs: number;
  close(): Promise<void>;
}

/** `port`: listen there (a receiver coming back where it was); 0 picks a free one. */
export async function startReceiver(script: number[] = [200], path = '/hook', port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const receiver: Receiver = { url: '', received, script, delayMs: 0, close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = receiver.script[Math.min(received.length, receiver.script.length - 1)];
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '' });
      const answer = () => res.writeHead(status, { 'content-type': 'text/plain' }).end(`answered ${status}`);
      if (receiver.delayMs) setTimeout(answer, receiver.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
