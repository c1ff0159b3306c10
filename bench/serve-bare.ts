// The ceiling: the smallest Koa server there is, run in its own process exactly like the api (same node, same
// tsx loader, same NODE_ENV) so the only difference between the two is our middleware, database and Redis work.
import Koa from 'koa';

const app = new Koa();
app.use((ctx) => {
  ctx.body = { ok: true };
});

// bench/servers.ts picks a free port and passes it in PORT, the same way it starts api/main.ts.
const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('PORT is required');
const server = app.listen(port, '127.0.0.1');
// Same keep-alive settings as api/main.ts, so neither server closes connections the other keeps.
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;

process.on('SIGTERM', () => server.close(() => process.exit(0)));
