// Open and click tracking in an MtaWorld: the api's tracking listener (api/tracking/server.ts) on a port of its own,
// the links the mta writes pointing there (`http://<tracking host>:<port>`), senders whose domain has tracking on,
// and the HTTP hits a mail client would make (the Host header names the tracking host, as its DNS would lead there).
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { simpleParser } from 'mailparser';
import { startMtaWorld, apiSender, type MtaWorld } from './mta.ts';
import { holdPort } from './ports.ts';
import { nodeRequest, type NodeResponse } from './http.ts';
import { createTrackingServer } from '../../api/tracking/server.ts';
import { engagementRecorder, type EngagementRecorder } from '../../shared/tracking/recorder.ts';
import { trackingMetrics } from '../../shared/metrics/tracking.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { createLogger } from '../../shared/logger.ts';
import type { Config } from '../../shared/config.ts';

export const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

export interface TrackingListener {
  port: number;
  recorder: EngagementRecorder;
  /** A GET (or `method`) of `url` as a client reaches it: to this listener, Host from the URL. */
  hit(
    url: string,
    o?: { method?: string; userAgent?: string | null; headers?: Record<string, string> },
  ): Promise<NodeResponse>;
  close(): Promise<void>;
}

/** A listener as api/main.ts wires it, on `port` (0: any); `config` on top of the world's (TRUST_PROXY, ...). */
export async function startTrackingListener(
  w: MtaWorld,
  o: { port?: number; machineWindowSeconds?: number; config?: Partial<Config> } = {},
): Promise<TrackingListener> {
  const config = { ...w.p.config, ...o.config };
  const log = createLogger(config, 'api');
  const recorder = engagementRecorder(w.p.db, log, {
    delayMs: 5,
    maxRows: 500,
    maxPending: 10_000,
    machineWindowSeconds: o.machineWindowSeconds ?? config.TRACKING_MACHINE_WINDOW_SECONDS,
  });
  const server: Server = createTrackingServer({
    config,
    db: w.p.db,
    log,
    secrets: secretsKey(config),
    recorder,
    metrics: trackingMetrics(),
  });
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    recorder,
    hit(url, h = {}) {
      const u = new URL(url);
      const headers: Record<string, string> = { host: u.host, ...h.headers };
      if (h.userAgent !== null) headers['user-agent'] = h.userAgent ?? BROWSER;
      return nodeRequest(`http://127.0.0.1:${port}`, {
        method: h.method ?? 'GET',
        path: u.pathname + u.search,
        headers,
      });
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await recorder.close();
    },
  };
}

export interface TrackingWorld {
  w: MtaWorld;
  listener: TrackingListener;
  close(): Promise<void>;
}

/** An MtaWorld whose tracked links lead to a tracking listener of its own (machine window 0 unless `env` says). */
export async function startTrackingWorld(env: Record<string, string> = {}): Promise<TrackingWorld> {
  // Held while the world starts (the mta writes it into links), bound by the listener right after.
  const held = await holdPort();
  const port = held.port;
  const w = await startMtaWorld({
    env: {
      TRACKING_PORT: String(port),
      TRACKING_LINK_SCHEME: 'http',
      TRACKING_LINK_PORT: String(port),
      TRACKING_MACHINE_WINDOW_SECONDS: '0',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      ...env,
    },
  });
  await held.release();
  const listener = await startTrackingListener(w, { port });
  return {
    w,
    listener,
    async close() {
      await listener.close();
      await w.close();
    },
  };
}

/** apiSender with the domain's open and click tracking set through the api (and verified again, as the world's are). */
export async function trackedSender(w: MtaWorld, name: string, flags = { open_tracking: true, click_tracking: true }) {
  const sender = await apiSender(w, name);
  const res = await w.p.request('PATCH', `/domains/${sender.domain.id}`, { key: sender.team.key, body: flags });
  if (res.status !== 200) throw new Error(`PATCH /domains: ${res.status} ${res.text}`);
  await w.p.db('domains').where({ id: sender.domain.id }).update({ status: 'verified', verified_at: new Date() });
  const domain = await w.p.db('domains').where({ id: sender.domain.id }).first();
  return { ...sender, trackingHost: `${domain.tracking_subdomain}.${name}` };
}

/** The HTML part of a delivered copy, decoded, and its hrefs and img srcs in order. */
export async function htmlOf(raw: Buffer): Promise<{ html: string; hrefs: string[]; images: string[]; text: string }> {
  const parsed = await simpleParser(raw);
  const html = parsed.html || '';
  const values = (attr: string) =>
    [...html.matchAll(new RegExp(`\\s${attr}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'gi'))].map(
      (m) => m[1] ?? m[2] ?? m[3],
    );
  return { html, hrefs: values('href'), images: values('src'), text: parsed.text ?? '' };
}
