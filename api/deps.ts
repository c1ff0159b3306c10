import type { Knex } from 'knex';
import type { Context } from 'koa';
import type { Redis } from 'ioredis';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import type { BlobStore } from '../shared/blobs.ts';
import type { DnsResolver } from '../shared/dns/resolver.ts';
import type { EnqueueDelivery } from '../shared/emails/enqueue.ts';
import type { RequestLogWriter } from '../shared/logs/writer.ts';
import type { ApiMetrics } from '../shared/metrics/api.ts';
import type { ContactJobs } from '../shared/imports/jobs.ts';
import type { TemplateCache } from '../shared/templates/send.ts';
import type { AccountMailer } from '../shared/accounts/mail.ts';
import type { OAuthServer } from './oauth/server.ts';

/**
 * Answers one request to /mcp (api/routes/mcp.ts declares it; the router runs it with no caller of its own); made by
 * api/mcp/endpoint.ts, declared here so that this file imports nothing of the MCP server's.
 */
export type McpEndpoint = (ctx: Context) => Promise<void>;

/** Everything a route or middleware may use; created once in api/main.ts (or by a test) and passed down. */
export interface ApiDeps {
  config: Config;
  db: Knex;
  redis: Redis;
  blobs: BlobStore;
  log: Logger;
  /** Lookups through DNS_SERVERS (domain checks, return-path conflicts). */
  dns: DnsResolver;
  /** Puts accepted emails on the deliver queue (after their commit). */
  enqueueDelivery: EnqueueDelivery;
  /** Contact imports to run and teams whose contacts changed, handed to the worker after their commit. */
  contactJobs: ContactJobs;
  version: string;
  /**
   * Where request logs go. api/main.ts passes a batching writer (flushed every 50 ms and on shutdown); without
   * one, createApp makes one that writes each request's row before its answer (rows of concurrent requests share
   * a statement). Reads of request logs call its flush() first, so this process reads its own writes.
   */
  requestLogs?: RequestLogWriter;
  /** The api's metrics (shared/metrics/api.ts), on the registry api/main.ts serves; without them createApp makes its
   * own, on a registry nobody scrapes (tests). */
  metrics?: ApiMetrics;
  /** Compiled template versions, kept for the process's sends; without it createApp makes one. */
  templates?: TemplateCache;
  /** Sends the account mails (shared/accounts/mail.ts); made on first use when not given. */
  accountMail?: AccountMailer;
  /** The OAuth authorization server and token checks (api/oauth/server.ts); createApp makes it when not given. */
  oauth?: OAuthServer;
  /** The MCP server (api/mcp/endpoint.ts) whose tools are the app's operations; createApp makes it. */
  mcp?: McpEndpoint;
}
