// The metrics listener of a process: GET /metrics answers its registry in Prometheus' text format, anything else
// 404. It listens on a port of its own (METRICS_<PROCESS>_PORT at METRICS_HOST, loopback by default), never on the
// API's: what the metrics say (volumes, queue depths, error rates) is the operator's, not the customers'.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { listen } from '../startup.ts';

export type MetricsProcess = 'api' | 'mta' | 'inbound' | 'worker';

const PORT_VARIABLE = {
  api: 'METRICS_API_PORT',
  mta: 'METRICS_MTA_PORT',
  inbound: 'METRICS_INBOUND_PORT',
  worker: 'METRICS_WORKER_PORT',
} as const satisfies Record<MetricsProcess, keyof Config>;

export type MetricsConfig = Pick<Config, 'METRICS_ENABLED' | 'METRICS_HOST' | (typeof PORT_VARIABLE)[MetricsProcess]>;

export function createMetricsServer(registry: Registry, log: Logger): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (err) => {
        log.warn({ err }, 'metrics.scrape_failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics could not be collected\n');
      },
    );
  });
}

export interface MetricsListener {
  /** The port it listens on (the kernel's pick when configured as 0); null when metrics are off. */
  port: number | null;
  close(): Promise<void>;
}

/**
 * Listens for scrapes (through startup's listen(): a port in use fails the start naming its variable) and logs the
 * address, `metrics.listening`; with METRICS_ENABLED=false it starts nothing and logs `metrics.off`.
 */
export async function serveMetrics(
  config: MetricsConfig,
  process: MetricsProcess,
  registry: Registry,
  log: Logger,
): Promise<MetricsListener> {
  if (!config.METRICS_ENABLED) {
    log.info('metrics.off');
    return { port: null, close: async () => {} };
  }
  const variable = PORT_VARIABLE[process];
  const configured = config[variable];
  const server = createMetricsServer(registry, log);
  await listen(server, configured, config.METRICS_HOST, variable);
  const { port } = server.address() as AddressInfo;
  log.info(
    { host: config.METRICS_HOST, port, variable, ...(configured === 0 ? { kernelPicked: true } : {}) },
    'metrics.listening',
  );
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
