// A lean SMTP submission client for the benchmarks, as smtp-source is on Postfix's side: each session does STARTTLS
// and AUTH PLAIN once, then sends messages made ahead of time, MAIL/RCPT/DATA pipelined (RFC 2920) and the message
// after the 354, nothing composed per message. nodemailer (the other client, BENCH_SMTP_CLIENT=nodemailer) builds
// each message with MailComposer and costs the machine 2-2.5 ms of CPU a 10 KB message on this VM: a fifth of the
// two cores the server under test also needs.
import net from 'node:net';
import tls from 'node:tls';

/** One SMTP session's reply reader: `next()` answers the next whole reply (its code and text). */
function replies(socket: net.Socket) {
  let buffer = '';
  let lines: string[] = [];
  const ready: { code: number; text: string }[] = [];
  const waiting: ((r: { code: number; text: string }) => void)[] = [];
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    let end: number;
    while ((end = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      lines.push(line);
      if (line[3] === '-') continue;
      const reply = { code: Number(line.slice(0, 3)), text: lines.join('\n') };
      lines = [];
      const w = waiting.shift();
      if (w) w(reply);
      else ready.push(reply);
    }
  };
  socket.on('data', onData);
  return {
    next: () =>
      new Promise<{ code: number; text: string }>((resolve) => {
        const r = ready.shift();
        if (r) resolve(r);
        else waiting.push(resolve);
      }),
    detach: () => socket.off('data', onData),
  };
}

async function expect(r: ReturnType<typeof replies>, code: number, what: string): Promise<void> {
  const reply = await r.next();
  if (reply.code !== code) throw new Error(`${what}: expected ${code}, got ${reply.text}`);
}

export interface SubmitSession {
  /** Sends one message (its envelope and its bytes, dot-stuffed and CRLF); resolves at the 250 after the dot. */
  send(from: string, to: string, message: Buffer): Promise<void>;
  close(): Promise<void>;
}

export async function openSubmitSession(port: number, user: string, pass: string): Promise<SubmitSession> {
  const plain = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => plain.once('connect', resolve).once('error', reject));
  let r = replies(plain);
  await expect(r, 220, 'greeting');
  plain.write('EHLO bench.test\r\n');
  await expect(r, 250, 'EHLO');
  plain.write('STARTTLS\r\n');
  await expect(r, 220, 'STARTTLS');
  r.detach();
  const socket = tls.connect({ socket: plain, rejectUnauthorized: false, servername: 'localhost' });
  await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
  socket.setNoDelay(true);
  r = replies(socket);
  socket.write('EHLO bench.test\r\n');
  await expect(r, 250, 'EHLO after STARTTLS');
  socket.write(`AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString('base64')}\r\n`);
  await expect(r, 235, 'AUTH');
  return {
    async send(from, to, message) {
      socket.write(`MAIL FROM:<${from}>\r\nRCPT TO:<${to}>\r\nDATA\r\n`);
      await expect(r, 250, 'MAIL FROM');
      await expect(r, 250, 'RCPT TO');
      await expect(r, 354, 'DATA');
      socket.write(Buffer.concat([message, Buffer.from('.\r\n')]));
      await expect(r, 250, 'end of data');
    },
    async close() {
      socket.write('QUIT\r\n');
      await r.next().catch(() => undefined);
      socket.end();
    },
  };
}

/** A plain-text message of about `bytes`, CRLF line ends, no line starting with a dot; ends with CRLF. */
export function submitMessage(from: string, to: string, subject: string, text: string, id: string): Buffer {
  const headers = [
    `Message-ID: <${id}>`,
    `From: Bench <${from}>`,
    `To: ${to}`,
    `Subject: ${subject}`,
    `Date: ${new Date().toUTCString().replace('GMT', '+0000')}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 7bit',
  ];
  const body = text.replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..');
  return Buffer.from(`${headers.join('\r\n')}\r\n\r\n${body}${body.endsWith('\r\n') ? '' : '\r\n'}`);
}
