// What the delivery stages receive, built once by the mta's wiring file (or a test) from its clients.
import type { Knex } from 'knex';
import type { Queue } from 'bullmq';
import type { BlobStore } from '../../shared/blobs.ts';
import type { Config } from '../../shared/config.ts';
import type { Logger } from '../../shared/logger.ts';
import { createResolver, type DnsResolver } from '../../shared/dns/resolver.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { createSigner, type Signer } from './sign.ts';
import { createSessionPool, type SessionPool } from './pool.ts';
import { DEFAULT_TIMEOUTS, type Timeouts } from './session.ts';
import { createThrottle, type Throttle } from './throttle.ts';
import { retryJobId } from './sweep.ts';
import { createSigningDomains, DOMAIN_CACHE_MS, type SigningDomains } from './signing-domain.ts';
import { cachingResolver } from './dns-cache.ts';
import { createGroupCommit, type RecordFn } from './group-commit.ts';
import { createLeaseGroup, type LeaseFn } from './lease.ts';
import { createByteBudget, type ByteBudget } from './memory.ts';
import { mtaMetrics, type MtaMetrics } from '../../shared/metrics/mta.ts';

export type DeliveryConfig = Pick<
  Config,
  | 'SIMULATOR_DOMAIN'
  | 'PUBLIC_BASE_URL'
  | 'SMTP_DELIVERY_PORT'
  | 'MTA_HOSTNAME'
  | 'TRACKING_LINK_SCHEME'
  | 'TRACKING_LINK_PORT'
>;

export interface DeliveryDeps {
  db: Knex;
  blobs: BlobStore;
  log: Logger;
  config: DeliveryConfig;
  secrets: Buffer;
  dns: DnsResolver;
  signer: Signer;
  /** Sending domains and their DKIM keys (managed ones: the platform key), cached a few seconds (signing-domain.ts). */
  domains: SigningDomains;
  pool: SessionPool;
  throttle: Throttle;
  /** The message bytes the jobs hold at once (memory.ts). */
  memory: ByteBudget;
  /** Writes an attempt's outcome, batched with the others that arrive meanwhile (group-commit.ts). */
  record: RecordFn;
  /** Takes a job's lease, in one statement with the others that ask meanwhile (lease.ts createLeaseGroup). */
  lease: LeaseFn;
  /** SMTP_DELIVERY_PORT, under the name transmit.ts takes it. */
  port: number;
  /** Enqueues the next attempt of a deferred email; without it, the sweep finds the email when it is due. */
  scheduleRetry?: (emailId: string, at: Date) => Promise<void>;
  metrics: MtaMetrics;
}

export interface DeliveryOptions {
  /** The deliver queue, for retries at their time. */
  queue?: Queue;
  timeouts?: Partial<Timeouts>;
  /** Signing threads (0: sign on the main thread); default MTA_SIGNING_THREADS. */
  signingThreads?: number;
  maxPerDestination?: number;
  /** Default MTA_MESSAGE_MEMORY_MB, in bytes. */
  messageMemoryBytes?: number;
  dns?: DnsResolver;
  /** How long a sending domain and its keys are kept (signing-domain.ts); 0 reads them for every message. */
  domainCacheMs?: number;
  /** The mta's metrics (mta/main.ts serves their registry); default: on a registry nobody scrapes. */
  metrics?: MtaMetrics;
}

export function createDeliveryDeps(
  config: Config,
  clients: { db: Knex; blobs: BlobStore; log: Logger },
  options: DeliveryOptions = {},
): DeliveryDeps {
  const queue = options.queue;
  const secrets = secretsKey(config);
  const metrics = options.metrics ?? mtaMetrics();
  return {
    ...clients,
    config,
    secrets,
    dns: options.dns ?? cachingResolver(createResolver({ servers: config.DNS_SERVERS })),
    signer: createSigner({ threads: options.signingThreads ?? config.MTA_SIGNING_THREADS }),
    domains: createSigningDomains(clients.db, secrets, config, options.domainCacheMs ?? DOMAIN_CACHE_MS),
    pool: createSessionPool({
      name: config.MTA_HOSTNAME,
      timeouts: { ...DEFAULT_TIMEOUTS, ...options.timeouts },
      connections: metrics.deliveryConnections,
    }),
    throttle: createThrottle(options.maxPerDestination ?? config.MTA_MAX_PER_DESTINATION),
    memory: createByteBudget(options.messageMemoryBytes ?? config.MTA_MESSAGE_MEMORY_MB * 1024 * 1024),
    record: createGroupCommit(clients),
    lease: createLeaseGroup(clients.db, clients.log),
    port: config.SMTP_DELIVERY_PORT,
    metrics,
    scheduleRetry: queue ? retryOn(queue) : undefined,
  };
}

/** The delayed job that tries a deferred email again at `at`, on `queue`. */
export function retryOn(queue: Queue): NonNullable<DeliveryDeps['scheduleRetry']> {
  return async (emailId, at) => {
    await queue.add(
      'deliver',
      { emailId },
      { jobId: retryJobId(emailId, at), delay: Math.max(0, at.getTime() - Date.now()) },
    );
  };
}

/** After the workers have drained: idle SMTP sessions say QUIT, signing threads end. */
export async function closeDeliveryDeps(deps: DeliveryDeps): Promise<void> {
  deps.pool.close();
  await deps.signer.close();
}
