// The api's HTTP server, with its slow-client defence: the headers and the whole request each have a deadline
// (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS), checked every second, so a client that sends less than its
// Content-Length, or its headers a byte at a time, holds a connection for seconds, not minutes. What Node refuses
// before the app sees a request (a timeout, headers past its size limit, a malformed request) is answered in the
// Error shape too, never with Node's empty body.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import type { Config } from '../shared/config.ts';

type Limits = Pick<Config, 'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS'>;

const REFUSALS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request was not received in time.'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'The request headers are too large.'],
};

function refuse(err: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
  const [status, reason, message] = REFUSALS[err.code ?? ''] ?? [400, 'Bad Request', 'The request is malformed.'];
  const body = JSON.stringify({ statusCode: status, name: 'validation_error', message });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function createHttpServer(app: Koa, limits: Limits): http.Server {
  const server = http.createServer(
    {
      headersTimeout: limits.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: limits.HTTP_REQUEST_TIMEOUT_MS,
      // Node checks the two deadlines every 30 s by default, which would add up to 30 s to each.
      connectionsCheckingInterval: 1000,
      // Behind a load balancer an idle connection stays open longer than the balancer's (often 60 s).
      keepAliveTimeout: 65_000,
    },
    app.callback(),
  );
  server.on('clientError', refuse);
  return server;
}
