// The inbound process: wiring only. Today it holds its clients and reports itself; the MX listener and the
// receive pipeline land with the receiving area (see README, "Feature status").
import { loadConfig } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { createDb } from '../shared/db/knex.ts';
import { onShutdown } from '../shared/shutdown.ts';

const config = loadConfig();
const log = createLogger(config, 'inbound');
const db = createDb(config);
await db.raw('select 1');
log.info({ mx: config.MX_PORT }, 'inbound.started_without_listeners');
const keepAlive = setInterval(() => {}, 1 << 30);

onShutdown(log, async () => {
  clearInterval(keepAlive);
  await db.destroy();
});
