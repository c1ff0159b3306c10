// nodemailer's SMTPConnection, reached into where its API stops: one prepared DATA payload in one socket write, the
// per-recipient answers of a failed transaction, and whether a failure came while STARTTLS was under way.
//
// Library: nodemailer 10.6.0, dist/cjs/smtp-connection/index.js. Internals used: `_createSendStream(callback)`
// (wrapped), `_responseActions` (the reply queue), `_actionSMTPStream(reply, callback)` (the final reply's handler),
// `_socket`, `_envelope` (kept until the next RSET) and `upgrading`. Guarded by test/lib-internals.test.ts (the members
// exist; a message sent this way arrives at a real smtp-server byte for byte) and the mta's delivery tests.
import type SMTPConnection from 'nodemailer/lib/smtp-connection';

export const NODEMAILER_VERSION = '10.6.0';

const CR = 0x0d;
const LF = 0x0a;
const DOT = 0x2e;

/**
 * The DATA payload of a message, as nodemailer's data stream would send it: a bare LF becomes CRLF, each line that
 * starts with a dot gets a second one (RFC 5321 §4.5.2), and the payload ends with `.<CRLF>` on a line of its
 * own. Null when the message has a bare CR (rare; that stream then handles it).
 */
export function dataPayload(message: Buffer): Buffer | null {
  for (let at = message.indexOf(CR); at !== -1; at = message.indexOf(CR, at + 2)) {
    if (message[at + 1] !== LF) return null;
  }
  // Byte offsets before which one byte is inserted, in order: CR before a bare LF, a dot before a line's dot.
  const at: number[] = [];
  const insert: number[] = [];
  if (message[0] === DOT) {
    at.push(0);
    insert.push(DOT);
  }
  for (let lf = message.indexOf(LF); lf !== -1; lf = message.indexOf(LF, lf + 1)) {
    if (message[lf - 1] !== CR) {
      at.push(lf);
      insert.push(CR);
    }
    if (message[lf + 1] === DOT) {
      at.push(lf + 1);
      insert.push(DOT);
    }
  }
  const end = message.length && message[message.length - 1] === LF ? '.\r\n' : '\r\n.\r\n';
  const out = Buffer.allocUnsafe(message.length + at.length + end.length);
  let from = 0;
  let to = 0;
  for (let i = 0; i < at.length; i++) {
    to += message.copy(out, to, from, at[i]);
    out[to++] = insert[i];
    from = at[i];
  }
  to += message.copy(out, to, from);
  out.write(end, to, 'latin1');
  return out;
}

interface ConnectionInternals {
  _socket: import('node:net').Socket;
  _responseActions: ((reply: string) => void)[];
  _actionSMTPStream(reply: string, callback: (err: Error | null, reply?: string) => void): void;
  _createSendStream(callback: (err: Error | null, reply?: string) => void): {
    write(chunk: unknown): unknown;
    end(): unknown;
    outByteCount: number;
  };
}

/**
 * nodemailer streams every message through a Transform that inspects it byte by byte (dot-stuffing, line ends)
 * and pipes the result to the socket. A message already in CRLF form goes instead as one prepared payload in
 * one socket write, the same bytes that stream would produce; `payload` is handed over for the next DATA only.
 */
export function sendPayloadDirectly(conn: SMTPConnection, lines: () => string[]) {
  const internals = conn as unknown as ConnectionInternals;
  const streamed = internals._createSendStream.bind(conn);
  let next: { payload: Buffer; source: number } | null = null;
  internals._createSendStream = (callback) => {
    const data = next;
    next = null;
    if (!data) return streamed(callback);
    internals._responseActions.push((reply) => internals._actionSMTPStream(reply, callback));
    return {
      outByteCount: data.payload.length,
      write: () => true,
      end: () => {
        internals._socket.write(data.payload);
        lines().push(`* <${data.payload.length} bytes encoded mime message (source size ${data.source} bytes)>`);
      },
    };
  };
  return (message: Buffer) => {
    const payload = dataPayload(message);
    next = payload ? { payload, source: message.length } : null;
  };
}

/** The per-recipient answers nodemailer holds for the current transaction (null outside one). */
export function pendingEnvelope<E>(conn: SMTPConnection): E | null {
  return (conn as unknown as { _envelope: E | false })._envelope || null;
}

/** True while the connection is upgrading to TLS (STARTTLS sent, handshake not finished). */
export function upgrading(conn: SMTPConnection): boolean {
  return (conn as unknown as { upgrading?: boolean }).upgrading === true;
}
