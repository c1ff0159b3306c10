// The api's warm-up (api/warm-up.ts): the libraries it loads on first use are loaded once it listens, and each load
// names a module that exists (a renamed file would otherwise surface only as a slow or failed first request).
import test from 'ava';
import { createLogger } from '../shared/logger.ts';
import { warmUp } from '../api/warm-up.ts';

test('the warm-up loads MJML, the MCP session and oidc-provider, and logs no failure', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ LOG_LEVEL: 'debug' }, 'api', {
    write: (line: string) => void lines.push(JSON.parse(line)),
  });
  await warmUp(log);
  t.deepEqual(
    lines.map((l) => l.msg),
    ['api.warmed_up'],
  );
  // Loaded now: what the first request imports is the same module, already evaluated.
  const session = await import('../api/mcp/session.ts');
  t.is(typeof session.answerMcp, 'function');
});
