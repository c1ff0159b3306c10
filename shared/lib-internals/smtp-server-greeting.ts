// Library: smtp-server 3.21.6. Internals used: SMTPConnection (lib/smtp-connection.js) subclassed, its init()
// restated (_setListeners, _server.options.maxClients, _server.connections, send, remoteAddress, _closing,
// _closed, connectionReady) and SMTPServer.connect() restated (connections, _onError, _onClientConnect). Guarded
// by test/lib-internals.test.ts and test/inbound-greeting.test.ts.
//
// smtp-server (3.x) holds every connection for a fixed 100 ms before its 220 greeting
// (lib/smtp-connection.js, init(): `setTimeout(() => this.connectionReady(), 100)`), and no option changes it.
// A client that writes during the pause is an early talker and gets 421 "You talk too soon" (onCommand checks
// `_ready`). Most MX traffic is one message per connection, so the pause is pure latency: at 20 connections it
// caps the listener near 190 messages/s however cheap the rest is (../shared/reference/benchmarks.md).
//
// The connection subclass below keeps upstream's init() (the same maxClients check, the same early-talker
// flag) and only makes the pause a setting, INBOUND_GREETING_DELAY_MS (25 ms by default). Why 25 ms is still
// meaningful: the bots this catches do not read before writing, they send HELO/MAIL right after the TCP
// handshake, which arrives within one round trip (well under 25 ms from anywhere on the same continent, a few
// ms on a LAN); a correct client waits for the 220 and is never affected. Postfix's postscreen goes further
// (a multi-line greeting and seconds of wait) for sites that want it; that belongs in front of this listener.
//
// A client address that waited out the pause is remembered for a day, as postscreen remembers a passed client
// (postscreen_greet_ttl, 1d), and greeted at once on its next connections: real senders come back from the same
// addresses all day, so they pay the pause once, while a bot meets it on every address it has not passed from.
import type net from 'node:net';
import type tls from 'node:tls';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { SMTPConnection, type SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection.js';

export const SMTP_SERVER_VERSION = '3.21.6';

/** How long a passed client is greeted without the pause (postscreen_greet_ttl's default). */
export const GREETING_PASS_TTL_MS = 24 * 60 * 60 * 1000;
/** At most this many passed addresses are remembered (about 10 MB); the oldest go first. */
const MAX_PASSED = 100_000;

/** Addresses that waited for the greeting, with when that stops counting. Map order = insertion order. */
export class GreetingPasses {
  private readonly passed = new Map<string, number>();

  constructor(
    private readonly ttlMs = GREETING_PASS_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  has(address: string): boolean {
    const until = this.passed.get(address);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.passed.delete(address);
    return false;
  }

  add(address: string): void {
    // Re-inserted, so a returning client moves to the young end and is evicted last.
    this.passed.delete(address);
    this.passed.set(address, this.now() + this.ttlMs);
    if (this.passed.size > MAX_PASSED) this.passed.delete(this.passed.keys().next().value!);
  }
}

class MxConnection extends SMTPConnection {
  constructor(
    server: MxSmtpServer,
    socket: net.Socket | tls.TLSSocket,
    options: SMTPConnectionOptions | null | undefined,
    private readonly mx: MxSmtpServer,
  ) {
    super(server, socket, options);
  }

  override init(): void {
    // Upstream's init(), with the pause as a setting, skipped for a client that passed it recently.
    this._setListeners(() => {
      if (this._server.options.maxClients && this._server.connections.size > this._server.options.maxClients) {
        return this.send(421, `${this.name} Too many connected clients, try again in a moment`, false);
      }
      const address = this.remoteAddress;
      if (this.mx.greetingDelayMs === 0 || this.mx.passes.has(address)) return this.connectionReady();
      setTimeout(() => {
        // An early talker got its 421 and the connection is closing: it did not pass.
        if (this._closing || this._closed) return;
        this.mx.passes.add(address);
        this.connectionReady();
      }, this.mx.greetingDelayMs).unref();
    });
  }
}

export class MxSmtpServer extends SMTPServer {
  readonly passes = new GreetingPasses();

  constructor(
    options: SMTPServerOptions,
    readonly greetingDelayMs: number,
  ) {
    super(options);
  }

  override connect(socket: net.Socket | tls.TLSSocket, socketOptions?: SMTPConnectionOptions | null): void {
    // Upstream's connect(), with our connection class.
    const connection = new MxConnection(this, socket, socketOptions, this);
    this.connections.add(connection);
    connection.on('error', (err: Error) => this._onError(err));
    connection.on('connect', (data: unknown) => this._onClientConnect(data as never));
    connection.init();
  }
}
