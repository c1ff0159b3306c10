// The tracking listener (TRACKING_HOST:TRACKING_PORT, beside the REST port in the api process): the open pixel
// `GET /o/<token>` and tracked links `GET /c/<token>` of every domain's tracking host, told apart by the Host header
// (docs/tracking.md), and `GET /tls-allowed?domain=<name>` for the TLS proxy in front (200 for a tracking host).
// Plain node:http, no Koa: a hit costs a Host lookup (kept 30 s), an HMAC and an answer; it is recorded a moment
// later, in a batch (shared/tracking/recorder.ts), never before the answer.
//
// Every refusal (unknown host, a token tampered with, one of another domain or team, a wrong kind, any other path or
// method) is the same small 404, so nothing can be learnt by trying. The pixel and the redirect are never cached,
// so every open and click reaches us.
import http from 'node:http';
import type { Knex } from 'knex';
import type { Config } from '../../shared/config.ts';
import type { Logger } from '../../shared/logger.ts';
import { domainKey, readToken, type TokenClaims, type TrackingKind } from '../../shared/tracking/tokens.ts';
import { hostName, trackingHosts, type TrackingDomain } from '../../shared/tracking/hosts.ts';
import { machineRule } from '../../shared/tracking/machine.ts';
import { keptIp } from '../../shared/tracking/ip.ts';
import type { EngagementRecorder } from '../../shared/tracking/recorder.ts';
import type { TrackingMetrics } from '../../shared/metrics/tracking.ts';

export interface TrackingServerDeps {
  config: Pick<Config, 'TRUST_PROXY' | 'TRACKING_IP_ADDRESSES' | 'HTTP_HEADERS_TIMEOUT_MS'>;
  db: Knex;
  log: Logger;
  secrets: Buffer;
  recorder: EngagementRecorder;
  metrics: TrackingMetrics;
}

/** A transparent 1×1 GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const NOT_FOUND = Buffer.from('Not found\n');
const NEVER_CACHE = 'no-store, no-cache, must-revalidate, private, max-age=0';
const HIT_PATH = /^\/([oc])\/([A-Za-z0-9_-]{1,2800})$/;
/** A TLS proxy's question before it gets a certificate for a name (Caddy's on-demand `ask`): is it a tracking host? */
const TLS_ASK = '/tls-allowed';
const KIND: Record<string, TrackingKind> = { o: 'open', c: 'click' };

function answer(res: http.ServerResponse, status: number, headers: http.OutgoingHttpHeaders, body: Buffer | null) {
  res.writeHead(status, {
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': NEVER_CACHE,
    'Content-Length': body?.length ?? 0,
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : (body ?? undefined));
}

const notFound = (res: http.ServerResponse) =>
  answer(res, 404, { 'Content-Type': 'text/plain; charset=utf-8' }, NOT_FOUND);

/** The client: the socket's address, or behind a trusted proxy (TRUST_PROXY) the first X-Forwarded-For entry. */
function clientIp(req: http.IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy
    ? String(req.headers['x-forwarded-for'] ?? '')
        .split(',')[0]
        .trim()
    : '';
  return forwarded || req.socket.remoteAddress || '';
}

/** The domain whose key tagged `token`, among the host's, and what the token says. */
function verify(secrets: Buffer, domains: TrackingDomain[], kind: TrackingKind, token: string) {
  for (const domain of domains) {
    const claims: TokenClaims | null = readToken(domainKey(secrets, domain.id), kind, token);
    if (claims) return { domain, claims };
  }
  return null;
}

export function createTrackingServer(deps: TrackingServerDeps): http.Server {
  const hosts = trackingHosts(deps.db);
  // The counter's series by name, each with its labels made once.
  const counted = Object.fromEntries(
    (['open', 'click'] as const).flatMap((kind) =>
      (['human', 'machine', 'refused'] as const).map((verdict) => {
        const labels = { kind, verdict };
        return [`${kind} ${verdict}`, { inc: () => deps.metrics.hits.inc(labels) }];
      }),
    ),
  );

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const method = req.method ?? '';
    const [path, search = ''] = (req.url ?? '').split('?');
    if (path === TLS_ASK && method === 'GET') {
      const name = hostName(new URLSearchParams(search).get('domain') ?? '');
      const known = (await hosts.lookup(name)).length > 0;
      return answer(
        res,
        known ? 200 : 404,
        { 'Content-Type': 'text/plain; charset=utf-8' },
        known ? Buffer.from('ok\n') : NOT_FOUND,
      );
    }
    const m = HIT_PATH.exec(path);
    if ((method !== 'GET' && method !== 'HEAD') || !m) return notFound(res);
    const kind = KIND[m[1]];
    const found = verify(deps.secrets, await hosts.lookup(hostName(req.headers.host)), kind, m[2]);
    if (!found) {
      counted[`${kind} refused`].inc();
      return notFound(res);
    }
    const at = new Date();
    const ip = clientIp(req, deps.config.TRUST_PROXY);
    const userAgent = String(req.headers['user-agent'] ?? '').slice(0, 512);
    const machine = machineRule({ method, userAgent, ip });
    if (kind === 'open') answer(res, 200, { 'Content-Type': 'image/gif' }, PIXEL);
    else answer(res, 302, { Location: found.claims.url! }, null);
    counted[`${kind} ${machine ? 'machine' : 'human'}`].inc();
    deps.recorder.add({
      kind,
      recipientId: found.claims.recipientId,
      domainId: found.domain.id,
      teamId: found.domain.team_id,
      linkIndex: found.claims.linkIndex,
      url: found.claims.url,
      at,
      userAgent,
      ip: keptIp(ip, deps.config.TRACKING_IP_ADDRESSES),
      machine,
    });
  }

  const server = http.createServer(
    { headersTimeout: deps.config.HTTP_HEADERS_TIMEOUT_MS, requestTimeout: 10_000, keepAliveTimeout: 65_000 },
    (req, res) => {
      handle(req, res).catch((err) => {
        // The database could not say whose host this is: a temporary failure, never a 404 a client would keep.
        deps.log.error({ err }, 'tracking.hit_failed');
        if (!res.headersSent)
          answer(
            res,
            503,
            { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '5' },
            Buffer.from('Try again shortly\n'),
          );
      });
    },
  );
  server.on('clientError', (_err, socket) => socket.destroy());
  return server;
}
