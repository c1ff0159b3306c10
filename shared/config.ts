// The one place that reads the environment. Every entry point (the four processes, the CLI, `npm run config`,
// `npm run migrate`, the launcher) calls loadConfig() once and passes the result down; nothing else touches
// process.env. The environment comes first, then the env file (`.env` beside package.json, or ENV_FILE), so
// every entry point sees the same configuration however it is started.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { RESERVED_TLDS } from './domains/reserved.ts';
import { root } from './layout.ts';

const port = z.coerce.number().int().min(0).max(65535);
const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => ['true', '1', 'yes'].includes(v));

/** `ip[:port]` entries, comma separated; empty means the system resolver. */
const dnsServers = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().regex(/^(\[[0-9a-fA-F:]+\]|[0-9.]+)(:\d{1,5})?$/, 'expected ip[:port] or [ipv6]:port')));

/** Reserved TLDs (shared/domains/reserved.ts), comma separated, lower-cased; anything else is a config error. */
const reservedTlds = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim().toLowerCase())
      .filter(Boolean),
  )
  .pipe(z.array(z.enum(RESERVED_TLDS, { error: `expected reserved TLDs among ${RESERVED_TLDS.join(', ')}` })));

const hostname = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export const configSchema = z.object({
  /** The env file read before the configuration (see envFile below): a path, or `none`. Default: `.env` beside
   * package.json when it exists. */
  ENV_FILE: z.string().optional(),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postwerk'),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/)
    .default('postwerk'),
  HOST: z.string().default('127.0.0.1'),
  PORT: port.default(3000),
  /** Where clients reach the api; defaults to http://127.0.0.1:<PORT>. */
  PUBLIC_BASE_URL: z.string().url().optional(),
  BLOB_DIR: z.string().min(1).default('.data/blobs'),
  DNS_SERVERS: dnsServers.default([]),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Prometheus metrics: every process answers GET /metrics on a port of its own at METRICS_HOST, never on the API's
   * port (docs/observability.md). A port of 0 is one the kernel picks (the process logs it); `false` starts none.
   */
  METRICS_ENABLED: bool.default(true),
  METRICS_HOST: z.string().default('127.0.0.1'),
  METRICS_API_PORT: port.default(9464),
  METRICS_MTA_PORT: port.default(9465),
  METRICS_INBOUND_PORT: port.default(9466),
  METRICS_WORKER_PORT: port.default(9467),
  SMTP_HOST: z.string().default('127.0.0.1'),
  SMTP_SUBMISSION_PORT: port.default(587),
  SMTP_SUBMISSION_TLS_PORT: port.default(465),
  MX_HOST: z.string().default('0.0.0.0'),
  MX_PORT: port.default(25),
  /** Largest message SMTP submission accepts (SIZE, RFC 1870): 40 MB of content plus MIME's base64 overhead;
   * larger ones are read to the end, dropped, and refused with 552 5.3.4. */
  SMTP_SUBMISSION_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(56 * 1024 * 1024),
  /** Largest message the MX accepts (SIZE, RFC 1870); larger ones are refused with 552 5.3.4. */
  INBOUND_MAX_MESSAGE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(40 * 1024 * 1024),
  /** The MX's pause before its 220 greeting; a client that talks first is cut (early-talker check). 0 turns it off. */
  INBOUND_GREETING_DELAY_MS: z.coerce.number().int().min(0).max(10_000).default(25),
  /** How long the MX remembers a receiving domain it found at RCPT (inbound/mx/recipient-cache.ts). 0: not at all. */
  INBOUND_RCPT_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
  /** clamd to scan received mail with: a unix socket path (`/run/clamav/clamd.ctl`) or `host:port`. Unset: no
   * scanning (the inbound logs it at start and /ready reports `virus_scanning: "off"`). */
  CLAMD_ADDRESS: z
    .string()
    .regex(/^(\/.+|[A-Za-z0-9.-]+:\d{1,5}|\[[0-9a-fA-F:]+\]:\d{1,5})$/, 'expected a socket path or host:port')
    .optional(),
  /** Receive jobs one inbound process runs at once. */
  INBOUND_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(10),
  RATE_LIMIT_RPS: z.coerce.number().int().min(1).max(100000).default(10),
  /** OAuth dynamic client registrations (POST /oauth/reg) one client address may make in an hour (docs/oauth.md). */
  OAUTH_REGISTRATIONS_PER_HOUR: z.coerce.number().int().min(1).max(100000).default(20),
  /** Slow-client defence: a request's headers must arrive within this (else 408, connection closed). */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** ... and the whole request, body included, within this (a body shorter than its Content-Length: 408). */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  TRUST_PROXY: bool.default(false),
  FIRST_TEAM_NAME: z.string().min(1).max(200).default('My team'),
  /** 32 random bytes, base64: encrypts DKIM private keys at rest. Or a file holding it (npm start creates one). */
  SECRETS_KEY: z.string().optional(),
  SECRETS_KEY_FILE: z.string().default('.data/secrets.key'),
  /** Every team's managed sending domain is `<word>.<MANAGED_DOMAIN_HOST>`. */
  MANAGED_DOMAIN_HOST: z.string().regex(hostname).default('postwerk.localhost'),
  /** DKIM selector of the platform key that signs the managed domains' mail (`d=` MANAGED_DOMAIN_HOST); its record
   * is `<selector>._domainkey.<MANAGED_DOMAIN_HOST>` (`npm run cli -- managed-dkim`). A new selector makes a new key.
   * */
  MANAGED_DKIM_SELECTOR: z
    .string()
    .regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'expected one lowercase DNS label')
    .default('pw1'),
  /** Platform host names the customers' DNS records point at (CONTRACT, "DNS records of a domain"). */
  PLATFORM_SPF_HOST: z.string().regex(hostname).default('_spf.postwerk.localhost'),
  PLATFORM_FEEDBACK_HOST: z.string().regex(hostname).default('feedback.postwerk.localhost'),
  PLATFORM_INBOUND_HOST: z.string().regex(hostname).default('inbound.postwerk.localhost'),
  PLATFORM_TRACKING_HOST: z.string().regex(hostname).default('track.postwerk.localhost'),
  TRACKING_CAA_ISSUER: z.string().regex(hostname).default('letsencrypt.org'),
  /**
   * Open and click tracking (docs/tracking.md): the api's tracking listener answers every domain's tracking host
   * (`<tracking_subdomain>.<domain>`, the Host header tells which) on TRACKING_HOST:TRACKING_PORT, behind a proxy that
   * terminates TLS for those names. Tracked links and the pixel are `<TRACKING_LINK_SCHEME>://<tracking host>`, with
   * `:<TRACKING_LINK_PORT>` when set (a test rig, a proxy on another port).
   */
  TRACKING_HOST: z.string().default('127.0.0.1'),
  TRACKING_PORT: port.default(3001),
  TRACKING_LINK_SCHEME: z.enum(['https', 'http']).default('https'),
  TRACKING_LINK_PORT: port.optional(),
  /** What a hit keeps of the client's IP address: `truncated` (IPv4 /24, IPv6 /48), `full`, or `none`. */
  TRACKING_IP_ADDRESSES: z.enum(['truncated', 'full', 'none']).default('truncated'),
  /** An open or click this soon after its recipient's delivery is a machine's (a link scanner), in seconds. */
  TRACKING_MACHINE_WINDOW_SECONDS: z.coerce.number().int().min(0).max(3600).default(10),
  /** PEM files of the SMTP listeners' certificate; unset: a self-signed one is made at start. */
  SMTP_TLS_KEY_FILE: z.string().optional(),
  SMTP_TLS_CERT_FILE: z.string().optional(),
  /** Port of the recipients' MX hosts; 25 in production, a loopback test server's port in tests. */
  SMTP_DELIVERY_PORT: port.default(25),
  /** Name our MTA gives in EHLO and in Message-IDs. */
  MTA_HOSTNAME: z.string().regex(hostname).default('mta.postwerk.localhost'),
  /** Addresses at this domain behave as the simulator (delivered@, bounced@, complained@, delayed@, suppressed@). */
  SIMULATOR_DOMAIN: z.string().regex(hostname).default('simulator.postwerk.localhost'),
  /**
   * Deliver jobs one mta process runs at once. A job spends most of its time waiting (on the database, on a peer's
   * reply, on a session slot), so this is well above MTA_MAX_PER_DESTINATION: the sessions never idle while their
   * jobs claim, sign or record (as Postfix runs up to 100 smtp clients for 20 per destination).
   */
  MTA_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(100),
  /**
   * Deliver jobs of broadcasts (queues.deliverBulk) one mta process runs at once, next to MTA_CONCURRENCY for the
   * rest: a broadcast's share of delivery is bounded, and transactional mail never queues behind it.
   */
  MTA_BULK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(40),
  /** Contacts one broadcast fan-out batch walks (one transaction: its recipients, their emails, the cursor). */
  BROADCAST_BATCH_SIZE: z.coerce.number().int().min(1).max(10000).default(500),
  /**
   * RSA DKIM keys the worker keeps made ahead (dkim_key_pool), so POST /domains takes one instead of spending
   * 50-500 ms of CPU on it; 0 keeps none (each new domain makes its key then).
   */
  DKIM_KEY_POOL_SIZE: z.coerce.number().int().min(0).max(1000).default(20),
  /**
   * Message bytes (emails.size_bytes) one mta process holds at once across its deliver jobs (mta/delivery/memory.ts);
   * a single larger message runs alone.
   */
  MTA_MESSAGE_MEMORY_MB: z.coerce.number().int().min(1).max(65536).default(512),
  /** SMTP sessions one mta process holds open at once to one MX host. */
  MTA_MAX_PER_DESTINATION: z.coerce.number().int().min(1).max(100).default(5),
  /** DKIM signing threads of one mta process; unset: cores minus two (none on 2 cores); 0: sign on the main thread. */
  MTA_SIGNING_THREADS: z.coerce.number().int().min(0).max(64).optional(),
  /**
   * Nice value (0-19) the mta's delivery runs at: on a machine it shares with the api, accepting a send (the api, and
   * the mta's submission thread, left at the process's priority) comes before delivering one when both want the CPU
   * (delivery catches up when accepting is idle). 0: the same priority as the api.
   */
  MTA_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /**
   * Nice value (0-19) the worker runs at: its jobs (broadcast fan-outs, imports, webhooks, rollups) are background work
   * that gives way to the api's answers when both want the CPU. 0: the same priority as the api.
   */
  WORKER_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /**
   * Nice value (0-19) of the inbound's receive jobs (scan, parse, authenticate): they give way to accepting (the api,
   * and the inbound's own MX thread, left at the process's priority) when both want the CPU. 0: the same priority.
   */
  INBOUND_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /**
   * Broadcast deliveries waiting in the mta's bulk queue above which a fan-out waits before its next batch: the
   * audience is written as fast as delivery drains it, not all at once (PostgreSQL's work spread over the send).
   */
  BROADCAST_MAX_BACKLOG: z.coerce.number().int().min(1).max(1_000_000).default(2000),
  /** The same message without an unsubscribe link may reach this many people a day (then 422). */
  BULK_DAILY_LIMIT: z.coerce.number().int().min(1).default(1000),
  /** Where the bulk refusal points (details.docs_url). */
  BULK_DOCS_URL: z.string().url().default('https://www.rfc-editor.org/rfc/rfc8058'),
  /**
   * Reserved TLDs (RFC 2606, RFC 6761: `test`, `example`, ...) whose names the platform treats as ordinary: a team may
   * add a domain under them and a recipient under them is not `reserved_domain`. For a test rig or a private network
   * whose own DNS answers for such names; never on a public deployment, where they are nobody's and reach no one.
   */
  RESERVED_TLDS_ALLOWED: reservedTlds.default([]),
  /** Auto-configure may send RFC 2136 updates to private, loopback and link-local addresses (SSRF guard off). */
  DNS_UPDATE_ALLOW_PRIVATE: bool.default(false),
  /**
   * Pre-send checks ask the network (docs/templates.md): whether each http(s) link answers, how large each image is.
   * Off: the checks read the message alone. Sends never wait on it; the check endpoints do.
   */
  CHECKS_NETWORK: bool.default(false),
  /** Each link or image the checks ask about must answer within this. */
  CHECKS_NETWORK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(3000),
  /** The checks may ask private, loopback, link-local and metadata addresses (SSRF guard off; tests). */
  CHECKS_NETWORK_ALLOW_PRIVATE_TARGETS: bool.default(false),
  /** Webhook endpoints may be plain http:// URLs (otherwise https only). */
  WEBHOOK_ALLOW_HTTP: bool.default(false),
  /** Webhooks may be sent to private, loopback, link-local and metadata addresses (SSRF guard off). */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool.default(false),
  /** Contact imports one worker process runs at once (each streams its file and writes in batches). */
  CONTACT_IMPORT_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(1),
  /** Rows of a contact import written in one transaction, with the import's progress. */
  CONTACT_IMPORT_BATCH_ROWS: z.coerce.number().int().min(1).max(50000).default(5000),
  /** Attachments by `path` may be plain http:// URLs (otherwise https only). */
  ATTACHMENT_FETCH_ALLOW_HTTP: bool.default(false),
  /**
   * Attachments by `path` may be fetched from private, loopback, link-local and metadata addresses (SSRF guard off).
   */
  ATTACHMENT_FETCH_ALLOW_PRIVATE_TARGETS: bool.default(false),
  /** The whole fetch of one attachment by `path` (connect, answer, body) must end within this. */
  ATTACHMENT_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /** PEM file of certificate authorities trusted for attachment fetches beside the system's (a private CA). */
  ATTACHMENT_FETCH_CA_FILE: z.string().optional(),
  /**
   * The sender of the account mails (sign-up verification, password reset, invitations, lock notices):
   * `Name <address>` or an address. Its domain belongs to the platform team (shared/accounts/platform-sender.ts),
   * made at setup; the operator publishes its records (`npm run cli -- platform-sender`). Unset: no account mail
   * is sent, so nobody can finish a sign-up.
   */
  PLATFORM_FROM: z
    .string()
    .max(320)
    .regex(
      /^(?:[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+)$/,
      'expected `Name <address>` or an address',
    )
    .optional(),
  /** Days every open and click hit (email_engagements) is kept; the hourly maintenance deletes older ones. */
  ENGAGEMENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  /** Days the metrics counters (GET /emails/metrics) are kept; older quarter hours count nothing. */
  METRICS_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(400),
  /** A dashboard session ends after this many minutes without a request (idle expiry). */
  SESSION_IDLE_MINUTES: z.coerce.number().int().min(1).max(525_600).default(1440),
  /** ... and this many days after sign-in, however busy (absolute expiry). */
  SESSION_MAX_DAYS: z.coerce.number().int().min(1).max(365).default(14),
  /** Failed sign-ins (or MFA codes) of one account in 15 minutes before it is locked for the rest of the window. */
  AUTH_ACCOUNT_FAILURES: z.coerce.number().int().min(1).max(1_000_000).default(10),
  /** Sign-in, MFA, sign-up and reset attempts of one client address (IPv6: its /64) in 15 minutes. */
  AUTH_CLIENT_ATTEMPTS: z.coerce.number().int().min(1).max(1_000_000).default(100),
  /** A team export stops adding rows past this many bytes of JSON (the archive says `truncated`); at most 1 GiB. */
  TEAM_EXPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .default(100 * 1024 * 1024),
  /** ... or past this many seconds of building. */
  TEAM_EXPORT_MAX_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
});

export type Config = Omit<z.infer<typeof configSchema>, 'PUBLIC_BASE_URL'> & { PUBLIC_BASE_URL: string };

export class ConfigError extends Error {}

/**
 * The env file this process reads: ENV_FILE (a path; `none` for no file), else `.env` beside package.json when
 * it exists. null: none.
 */
export function envFile(env: NodeJS.ProcessEnv = process.env): string | null {
  const named = env.ENV_FILE;
  if (named === 'none') return null;
  if (named) {
    const file = path.resolve(named);
    if (!existsSync(file)) throw new ConfigError(`invalid configuration:\n  ENV_FILE: ${file} does not exist`);
    return file;
  }
  const file = path.join(root, '.env');
  return existsSync(file) ? file : null;
}

/**
 * The validated configuration. Without an argument: process.env, after the env file's variables were added to it
 * (a variable already in the environment wins), so child processes inherit the same values.
 */
export function loadConfig(given?: NodeJS.ProcessEnv): Config {
  let env = given;
  if (!env) {
    const file = envFile();
    if (file) process.loadEnvFile(file);
    env = process.env;
  }
  const input = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const data = parsed.data;
  return { ...data, PUBLIC_BASE_URL: (data.PUBLIC_BASE_URL ?? `http://127.0.0.1:${data.PORT}`).replace(/\/$/, '') };
}

/** The configuration as it can be printed: credentials in URLs masked. */
export function printableConfig(config: Config): Record<string, unknown> {
  const mask = (u: string) => u.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
  return {
    ...config,
    DATABASE_URL: mask(config.DATABASE_URL),
    REDIS_URL: mask(config.REDIS_URL),
    SECRETS_KEY: config.SECRETS_KEY ? '***' : undefined,
  };
}

/** The configuration, or the process ends with its errors on one line each (exit 1), never a stack trace. */
export function readConfig(processName: string): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${processName}: ${err.message}\n`);
    process.exit(1);
  }
}
