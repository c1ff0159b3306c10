// The oauth suite of `npm run bench` (BENCH_ONLY=oauth; see bench/README.md): the api in this process (its own
// database and Redis prefix), a person's grant made through the real authorization flow; then one request at a
// time: GET /domains with an API key and with an OAuth access token (the token check's cost over the key's, p99),
// and the MCP tool listEmails next to GET /emails (one JSON-RPC call through the Streamable HTTP transport).
import { startPlatform } from '../test/helpers/platform.ts';
import { freePort } from '../test/helpers/ports.ts';
import { grantedToken } from '../test/helpers/oauth.ts';
import { USER_AGENT } from './load.ts';
import { fixed, renderTable } from './table.ts';

/** The budgets: a token adds under 1 ms at p99; an MCP list call within 1.5x of the REST one (p50). */
export const TOKEN_P99_OVERHEAD_MS = 1;
export const MCP_RATIO = 1.5;

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function timed(n: number, call: () => Promise<Response>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const res = await call();
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`answered ${res.status}`);
    out.push(performance.now() - started);
  }
  return out.sort((a, b) => a - b);
}

export async function runOAuthBench(o: { requests: number }): Promise<boolean> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const p = await startPlatform({ PORT: String(port), PUBLIC_BASE_URL: base, RATE_LIMIT_RPS: '100000' });
  try {
    const api = await grantedToken(p.db, base, 'bench-api@people.test', 'domains:read emails:read');
    const mcp = await grantedToken(p.db, base, 'bench-mcp@people.test', 'emails:read', `${base}/mcp`);
    const team = await p.createTeam('bench keys');
    const get = (path: string, bearer: string) =>
      fetch(base + path, { headers: { authorization: `Bearer ${bearer}`, 'user-agent': USER_AGENT } });
    const rpc = (bearer: string) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${bearer}`,
          'user-agent': USER_AGENT,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'listEmails', arguments: {} },
        }),
      });
    // Warm both paths (the provider is made on first use; first queries plan).
    await timed(50, () => get('/domains', team.key));
    await timed(50, () => get('/domains', api.tokens.body.access_token));
    await timed(20, () => rpc(mcp.tokens.body.access_token));
    const byKey = await timed(o.requests, () => get('/domains', team.key));
    const byToken = await timed(o.requests, () => get('/domains', api.tokens.body.access_token));
    const rest = await timed(o.requests, () => get('/emails', api.tokens.body.access_token));
    const tool = await timed(o.requests, () => rpc(mcp.tokens.body.access_token));
    const rows = [
      ['GET /domains, API key', byKey],
      ['GET /domains, OAuth token', byToken],
      ['GET /emails, OAuth token', rest],
      ['MCP tools/call listEmails', tool],
    ].map(([label, t]) => [label as string, fixed(pct(t as number[], 50), 2), fixed(pct(t as number[], 99), 2)]);
    console.log(`\noauth: ${o.requests} requests each, one at a time (ms)\n`);
    console.log(renderTable(['call', 'p50', 'p99'], rows));
    const overhead = pct(byToken, 99) - pct(byKey, 99);
    const ratio = pct(tool, 50) / pct(rest, 50);
    const tokenOk = overhead < TOKEN_P99_OVERHEAD_MS;
    const mcpOk = ratio <= MCP_RATIO;
    console.log(`${tokenOk ? 'PASS' : 'FAIL'} token check adds ${fixed(overhead, 2)} ms at p99 over an API key (< 1)`);
    console.log(`${mcpOk ? 'PASS' : 'FAIL'} MCP listEmails is ${fixed(ratio, 2)}x the REST call at p50 (<= 1.5)`);
    // Reported, not judged: the budget is read at p50 (bench/README.md, the oauth suite, says why).
    console.log(`     MCP listEmails is ${fixed(pct(tool, 99) / pct(rest, 99), 2)}x the REST call at p99`);
    return tokenOk && mcpOk;
  } finally {
    await p.close();
  }
}
