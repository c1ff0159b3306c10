// A receiving MTA for tests: real SMTP (smtp-server) on a loopback address, scripted per recipient. Each
// recipient can be given an answer for its RCPT TO and for the DATA that follows ('250 ...', '450 4.2.1 ...',
// '550 5.1.1 ...', or 'drop' to cut the connection, 'hang' to never answer); the greeting can be scripted too.
// STARTTLS is offered or not (smtp-server's built-in self-signed certificate). Every message accepted is kept
// with its envelope, raw bytes and whether the session was encrypted.
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

export type SinkAction = string | 'drop' | 'hang';

export interface SinkScript {
  rcpt?: SinkAction;
  data?: SinkAction;
}

export interface SinkMessage {
  from: string;
  to: string[];
  raw: Buffer;
  secure: boolean;
  sessionId: string;
}

export interface SmtpSink {
  host: string;
  port: number;
  messages: SinkMessage[];
  /**
   * Connections accepted, open now and at most at once, MAIL FROM commands seen (transactions started), and messages
   * read to their final dot whose answer is still to come (`dataDelayMs`, hold()): one of those may still be kept.
   */
  stats: { connections: number; open: number; peakOpen: number; transactions: number; pending: number };
  script(address: string, script: SinkScript): void;
  /** Answer every new connection's greeting with this action (null: the normal 220). */
  greeting(action: SinkAction | null): void;
  /**
   * Holds every DATA answer (messages received, no 250 yet) until the function it answers is called. A held message
   * whose connection closed meanwhile is not kept: the receiver never took responsibility for it (RFC 5321 §6.1, that
   * comes with the 250), as a real MTA that has not committed it before answering.
   */
  hold(): () => void;
  /** Messages accepted for `address`. */
  deliveredTo(address: string): SinkMessage[];
  /** Resolves once `check` holds (polled on every event of the sink), or rejects after `ms`. */
  waitFor(check: () => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export interface SinkOptions {
  host?: string;
  port?: number;
  starttls?: boolean;
  /** Announced SIZE limit. */
  size?: number;
  /** Wait this long after the message before answering its DATA (a slow receiver). */
  dataDelayMs?: number;
}

/** What the sink does at one step of a session: a reply, a cut connection ('drop'), or no answer ever ('hang'). */
function act(
  server: SMTPServer,
  action: SinkAction,
  session: SMTPServerSession,
  callback: (err?: Error | null) => void,
) {
  if (action === 'hang') return;
  if (action === 'drop') {
    for (const c of server.connections) {
      const conn = c as unknown as { id: string; _socket: { destroy(): void } };
      if (conn.id === session.id) conn._socket.destroy();
    }
    return;
  }
  const m = /^(\d{3}) (.*)$/.exec(action);
  if (!m) throw new Error(`bad sink action ${action}`);
  if (m[1].startsWith('2')) return callback();
  callback(Object.assign(new Error(m[2]), { responseCode: Number(m[1]) }));
}

/** Conditions polled on every event of the sink (`changed`), each resolving its wait once it holds. */
function eventWaits() {
  const waiters = new Set<() => void>();
  return {
    changed: () => waiters.forEach((w) => w()),
    waitFor(check: () => boolean, ms = 10_000): Promise<void> {
      return new Promise((resolve, reject) => {
        const poll = () => {
          if (!check()) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error('sink: condition not met in time'));
        }, ms);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(poll);
        };
        waiters.add(poll);
        poll();
      });
    },
  };
}

export async function startSmtpSink(options: SinkOptions = {}): Promise<SmtpSink> {
  const host = options.host ?? '127.0.0.1';
  const scripts = new Map<string, SinkScript>();
  const messages: SinkMessage[] = [];
  const stats = { connections: 0, open: 0, peakOpen: 0, transactions: 0, pending: 0 };
  const { changed, waitFor } = eventWaits();
  let greetingAction: SinkAction | null = null;
  let held: Promise<void> | null = null;
  const closed = new Set<string>();
  const connected = new Set<string>();

  const server: SMTPServer = new SMTPServer({
    logger: false,
    secure: false,
    hideSTARTTLS: options.starttls === false,
    authOptional: true,
    disabledCommands: ['AUTH'],
    ...(options.size ? { size: options.size } : {}),
    onConnect(session, callback) {
      stats.connections++;
      connected.add(session.id);
      stats.open = connected.size;
      stats.peakOpen = Math.max(stats.peakOpen, stats.open);
      changed();
      if (!greetingAction) return callback();
      act(server, greetingAction, session, callback);
    },
    onClose(session) {
      closed.add(session.id);
      // A client gone before its greeting (smtp-server's reverse lookup still running) closes without a connect.
      connected.delete(session.id);
      stats.open = connected.size;
      changed();
    },
    onMailFrom(_address, _session, callback) {
      stats.transactions++;
      callback();
    },
    onRcptTo(address, session, callback) {
      const rcpt = scripts.get(address.address.toLowerCase())?.rcpt;
      if (!rcpt) return callback();
      act(server, rcpt, session, callback);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        stats.pending++;
        const settled = () => (stats.pending--, changed());
        if (options.dataDelayMs) await new Promise((r) => setTimeout(r, options.dataDelayMs));
        // Only a held message is dropped when its connection closed: otherwise, as a real MX, the sink keeps what it
        // read to the final dot even if the client is gone (the 250-to-commit window the kill tests look for).
        if (held) {
          await held;
          if (closed.has(session.id)) return settled();
        }
        const to = session.envelope.rcptTo.map((a) => a.address);
        const scripted = to.map((a) => scripts.get(a.toLowerCase())?.data).find((d) => d !== undefined);
        if (scripted && !scripted.startsWith('2')) {
          act(server, scripted, session, callback);
          settled();
          return;
        }
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        messages.push({ from, to, raw: Buffer.concat(chunks), secure: session.secure, sessionId: session.id });
        callback(null, '2.0.0 Ok: queued');
        settled();
      });
    },
  });
  server.on('error', () => {});

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.server.address() as { port: number }).port;

  return {
    host,
    port,
    messages,
    stats,
    script: (address, script) => scripts.set(address.toLowerCase(), script),
    greeting: (action) => {
      greetingAction = action;
    },
    hold() {
      let release = () => {};
      held = new Promise<void>((resolve) => (release = resolve));
      return () => ((held = null), release());
    },
    deliveredTo: (address) => messages.filter((m) => m.to.some((t) => t.toLowerCase() === address.toLowerCase())),
    waitFor,
    async close() {
      for (const c of server.connections) (c as unknown as { _socket: { destroy(): void } })._socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
