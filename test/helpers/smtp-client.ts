// A hand-driven SMTP client over implicit TLS (or plain TCP with `plain`), for sessions no well-behaved library would
// send (bare LF, smuggling sequences, garbage). Each step answers the server's reply text.
import net from 'node:net';
import tls from 'node:tls';

export interface RawSmtp {
  /** Sends a line (CRLF added) or raw bytes, then waits for a complete reply. */
  send(data: string | Buffer, raw?: boolean): Promise<string>;
  /** Writes `chunk` `times` times as the server reads it (backpressure), then `end`; answers the reply to it all. */
  pump(chunk: Buffer, times: number, end: string): Promise<string>;
  close(): void;
  greeting: string;
}

export async function rawSmtp(port: number, { plain = false } = {}): Promise<RawSmtp> {
  const socket = plain
    ? net.connect({ host: '127.0.0.1', port })
    : tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
  let buffer = '';
  let waiting: ((reply: string) => void) | null = null;
  const complete = () => {
    // A reply is complete at a line `NNN text` (no dash after the code).
    const lines = buffer.split('\r\n');
    const done = lines.findIndex((l) => /^\d{3} /.test(l));
    if (done < 0) return;
    const reply = lines.slice(0, done + 1).join('\r\n');
    buffer = lines.slice(done + 1).join('\r\n');
    const w = waiting;
    waiting = null;
    w?.(reply);
  };
  socket.on('data', (d) => {
    buffer += d.toString('latin1');
    if (waiting) complete();
  });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      // One error listener per pending reply, removed with it: a long session must not pile them up.
      waiting = (reply) => {
        socket.off('error', reject);
        resolve(reply);
      };
      socket.once('error', reject);
      complete();
    });
  const greeting = await next();
  return {
    greeting,
    send(data, raw = false) {
      const reply = next();
      socket.write(raw ? data : `${data}\r\n`);
      return reply;
    },
    async pump(chunk, times, end) {
      const reply = next();
      for (let i = 0; i < times; i++) {
        if (!socket.write(chunk)) await new Promise((resolve) => socket.once('drain', resolve));
      }
      socket.write(end);
      return reply;
    },
    close: () => socket.destroy(),
  };
}
