// Liveness and readiness: unauthenticated, outside the customer contract.
import { z } from 'zod';
import { defineOperation } from './operation.ts';
import type { ApiDeps } from '../deps.ts';
import { pingClamd } from '../../shared/clamd/client.ts';

const CHECK_TIMEOUT_MS = 2000;

const health = z.object({ status: z.literal('ok'), version: z.string(), env: z.string() }).meta({ id: 'Health' });
const ready = z
  .object({
    status: z.enum(['ok', 'degraded']),
    version: z.string(),
    env: z.string(),
    checks: z.array(
      z.object({ name: z.string(), ok: z.boolean(), durationMs: z.number(), error: z.string().optional() }),
    ),
    failed: z.array(z.string()),
    virus_scanning: z
      .enum(['on', 'off'])
      .describe(
        'Extension: whether received mail is scanned (CLAMD_ADDRESS set); when on, the `clamd` check says whether clamd answers',
      ),
  })
  .meta({ id: 'Ready' });

type Check = { name: string; run: (deps: ApiDeps) => Promise<unknown> };

const checks: Check[] = [
  { name: 'database', run: (d) => d.db.raw('select 1') },
  { name: 'redis', run: (d) => d.redis.ping() },
  { name: 'blob_store', run: (d) => d.blobs.check() },
];

/** Only when scanning is on: received mail waits (stored, retried) while clamd is unreachable. */
const clamdCheck: Check = { name: 'clamd', run: (d) => pingClamd(d.config.CLAMD_ADDRESS!, CHECK_TIMEOUT_MS) };

async function runCheck(check: Check, deps: ApiDeps) {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check.run(deps),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return { name: check.name, ok: true, durationMs: Math.round(performance.now() - started) };
  } catch (err) {
    // The message names the failing dependency's complaint (refused, timed out), never credentials or SQL.
    const error =
      (err as Error).message
        ?.split('\n')[0]
        .replace(/\/\/[^@\s]*@/g, '//***@')
        .slice(0, 200) || 'failed';
    return { name: check.name, ok: false, durationMs: Math.round(performance.now() - started), error };
  } finally {
    clearTimeout(timer);
  }
}

const base = { tag: 'operations', permission: 'none', scope: null } as const;

export const operationsOperations = [
  defineOperation({
    ...base,
    operationId: 'getHealth',
    method: 'get',
    path: '/health',
    summary: 'Liveness',
    description:
      'Answers 200 while the process runs, without looking at its dependencies: for a supervisor deciding whether to restart it. No API key.',
    response: health,
    handler: async ({ deps }) => ({ status: 'ok' as const, version: deps.version, env: deps.config.NODE_ENV }),
  }),
  defineOperation({
    ...base,
    operationId: 'getReady',
    method: 'get',
    path: '/ready',
    summary: 'Readiness',
    description:
      'Checks each dependency (PostgreSQL, Redis, the blob store, and clamd when scanning is on) within 2 seconds and answers one result per check: 200 when all pass, 503 with the failed ones named. For a load balancer deciding whether to send traffic here. No API key.',
    response: ready,
    alsoAnswers: [503],
    handler: async ({ deps, ctx }) => {
      const scanning = deps.config.CLAMD_ADDRESS ? ('on' as const) : ('off' as const);
      const results = await Promise.all(
        [...checks, ...(scanning === 'on' ? [clamdCheck] : [])].map((c) => runCheck(c, deps)),
      );
      const failed = results.filter((r) => !r.ok).map((r) => r.name);
      if (failed.length > 0) ctx.state.statusOverride = 503;
      return {
        status: failed.length ? ('degraded' as const) : ('ok' as const),
        version: deps.version,
        env: deps.config.NODE_ENV,
        checks: results,
        failed,
        virus_scanning: scanning,
      };
    },
  }),
];
