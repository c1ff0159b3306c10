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
import type net from 'node:net';
import type tls from 'node:tls';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { SMTPConnection, type SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection.js';

class MxConnection extends SMTPConnection {
  constructor(server: SMTPServer, socket: net.Socket | tls.TLSSocket, options: SMTPConnectionOptions | null | undefined, private readonly greetingDelayMs: number) {
    super(server, socket, options);
  }

  override init(): void {
    // Upstream's init(), with the pause as a setting.
    this._setListeners(() => {
      if (this._server.options.maxClients && this._server.connections.size > this._server.options.maxClients) {
        return this.send(421, `${this.name} Too many connected clients, try again in a moment`, false);
      }
      setTimeout(() => this.connectionReady(), this.greetingDelayMs).unref();
    });
  }
}

export class MxSmtpServer extends SMTPServer {
  constructor(options: SMTPServerOptions, private readonly greetingDelayMs: number) {
    super(options);
  }

  override connect(socket: net.Socket | tls.TLSSocket, socketOptions?: SMTPConnectionOptions | null): void {
    // Upstream's connect(), with our connection class.
    const connection = new MxConnection(this, socket, socketOptions, this.greetingDelayMs);
    this.connections.add(connection);
    connection.on('error', (err: Error) => this._onError(err));
    connection.on('connect', (data: unknown) => this._onClientConnect(data as never));
    connection.init();
  }
}
