// The libraries the api loads on first use rather than at start (MJML for block documents, the MCP SDK, oidc-provider:
// docs/testing.md), loaded once it listens, in the background, so that no person's first request of the kind waits
// the second or so they take. Tests skip it: their processes are short-lived and most never use them.
import type { Logger } from '../shared/logger.ts';

export async function warmUp(log: Logger): Promise<void> {
  const started = Date.now();
  const loaded = await Promise.allSettled([import('mjml'), import('./mcp/session.ts'), import('oidc-provider')]);
  const failed = loaded.filter((r) => r.status === 'rejected');
  if (failed.length) log.warn({ err: (failed[0] as PromiseRejectedResult).reason }, 'api.warm_up_failed');
  else log.debug({ ms: Date.now() - started }, 'api.warmed_up');
}
