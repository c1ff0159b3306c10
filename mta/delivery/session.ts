// One SMTP session to one MX address, over nodemailer's SMTPConnection: connect (greeting, EHLO, opportunistic
// STARTTLS accepting any certificate, RFC 7435), send transactions, RSET, QUIT. Every command and reply goes to
// the session's transcript; the message itself does not. Every wait is bounded, and an error or a closed
// connection settles it: nothing here waits on a peer forever.
import { format } from 'node:util';
import { isIP } from 'node:net';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { pendingEnvelope, sendPayloadDirectly, upgrading } from '../../shared/lib-internals/nodemailer-connection.ts';

export interface Target {
  /** The MX host name (SNI, logs, the throttle key). */
  host: string;
  ip: string;
  port: number;
}

export interface Timeouts {
  connect: number;
  greeting: number;
  /** Inactivity while waiting for any reply. */
  socket: number;
  /** A whole transaction (MAIL FROM to the final reply), so a slow peer cannot hold a job past its lease. */
  transaction: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { connect: 30_000, greeting: 60_000, socket: 120_000, transaction: 300_000 };

export type SmtpError = Error & { code?: string; response?: string; responseCode?: number; command?: string };

interface EnvelopeState {
  accepted: string[];
  rejectedErrors: (SmtpError & { recipient?: string })[];
}

export type SendResult =
  | { ok: true; response: string; envelope: EnvelopeState }
  | { ok: false; error: SmtpError; envelope: EnvelopeState | null };

export interface Session {
  target: Target;
  tls: boolean;
  /** Taken from the pool rather than opened for this use. */
  reused: boolean;
  /** Transactions sent over it. */
  messages: number;
  /** False once the connection closed or failed. */
  usable(): boolean;
  /** Lines of the current use of the session (the pool starts a new list for each use). */
  transcript: string[];
  send(from: string, to: string[], message: Buffer): Promise<SendResult>;
  /** RSET after a failed transaction; false when the session is no longer usable. */
  reset(): Promise<boolean>;
  close(): void;
}

export type Opened = { ok: true; session: Session } | { ok: false; error: SmtpError; transcript: string[] };

function transcriptLogger(lines: () => string[]) {
  const write = (entry: { tnx?: string } | undefined, message?: unknown, ...args: unknown[]) => {
    const prefix = entry?.tnx === 'client' ? 'C: ' : entry?.tnx === 'server' ? 'S: ' : '* ';
    for (const line of format(message ?? '', ...args).split(/\r?\n/)) lines().push(prefix + line);
  };
  const quiet = () => {};
  return { trace: quiet, debug: write, info: write, warn: write, error: write, fatal: write };
}

/** Settles once: the callback, an 'error' or 'end' event, or the deadline, whichever comes first. */
function once<T>(
  conn: SMTPConnection,
  ms: number,
  run: (done: (v: T | SmtpError) => void) => void,
): Promise<T | SmtpError> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (v: T | SmtpError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn.off('error', onError);
      conn.off('end', onEnd);
      resolve(v);
    };
    const onError = (err: SmtpError) => done(err);
    const onEnd = () => done(Object.assign(new Error('Connection closed'), { code: 'ECONNECTION' }));
    const timer = setTimeout(() => {
      done(Object.assign(new Error(`No answer within ${ms} ms`), { code: 'ETIMEDOUT' }));
      conn.close();
    }, ms);
    conn.on('error', onError);
    conn.once('end', onEnd);
    run(done);
  });
}

const isError = (v: unknown): v is SmtpError => v instanceof Error;

export async function openSession(
  target: Target,
  options: { name: string; timeouts: Timeouts; ignoreTLS: boolean },
): Promise<Opened> {
  const t = options.timeouts;
  let dead = false;
  const lines: { current: string[] } = { current: [] };
  const conn = new SMTPConnection({
    host: target.ip,
    port: target.port,
    name: options.name,
    secure: false,
    ignoreTLS: options.ignoreTLS,
    opportunisticTLS: true,
    tls: { rejectUnauthorized: false, ...(isIP(target.host) ? {} : { servername: target.host }) },
    connectionTimeout: t.connect,
    greetingTimeout: t.greeting,
    socketTimeout: t.socket,
    socketCloseTimeout: 1000,
    transactionLog: true,
    logger: transcriptLogger(() => lines.current),
  });
  // Errors reach the caller through once(); these listeners keep an 'error' with nobody waiting from throwing.
  conn.on('error', () => {
    dead = true;
  });
  conn.on('end', () => {
    dead = true;
  });
  const prepareData = sendPayloadDirectly(conn, () => lines.current);
  lines.current.push(
    `* connecting to ${target.host} [${target.ip}]:${target.port}${options.ignoreTLS ? ' without STARTTLS' : ''}`,
  );
  const connected = await once<true>(conn, t.connect + t.greeting + t.socket, (done) =>
    conn.connect((err) => done(err ?? true)),
  );
  if (isError(connected)) {
    // A STARTTLS handshake that failed is a TLS failure whatever nodemailer calls it (a broken handshake comes as
    // ESOCKET while it is still upgrading): transmit.ts then tries once in the clear (RFC 7435 §3).
    if (upgrading(conn) || connected.code === 'UPGRADE_TIMEOUT') connected.code = 'ETLS';
    conn.close();
    return { ok: false, error: connected, transcript: lines.current };
  }
  lines.current.push(`* session ${conn.secure ? 'encrypted with STARTTLS' : 'in the clear (no STARTTLS)'}`);

  const session: Session = {
    target,
    tls: conn.secure,
    reused: false,
    messages: 0,
    usable: () => !dead,
    get transcript() {
      return lines.current;
    },
    set transcript(v: string[]) {
      lines.current = v;
    },
    async send(from, to, message) {
      session.messages++;
      prepareData(message);
      const sent = await once<SMTPConnection.SentMessageInfo>(conn, t.transaction, (done) =>
        conn.send({ from, to, size: message.length }, message, (err, info) =>
          done(err ?? (info as SMTPConnection.SentMessageInfo)),
        ),
      );
      // A failed DATA or final reply does not hand the per-recipient answers over otherwise.
      const envelope = pendingEnvelope<EnvelopeState>(conn);
      if (isError(sent)) return { ok: false, error: sent, envelope };
      return {
        ok: true,
        response: sent.response,
        envelope: { accepted: sent.accepted, rejectedErrors: sent.rejectedErrors ?? [] },
      };
    },
    async reset() {
      if (dead) return false;
      return (await once<boolean>(conn, t.socket, (done) => conn.reset((err) => done(err ?? true)))) === true;
    },
    close() {
      if (dead) return conn.close();
      dead = true;
      // QUIT politely, but never wait on a peer that does not answer it.
      conn.quit();
      setTimeout(() => conn.close(), 1000).unref();
    },
  };
  return { ok: true, session };
}
