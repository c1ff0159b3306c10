// The mta process: wiring only. Today it holds its clients and reports itself; the SMTP submission listeners
// and the delivery pipeline land with the sending area (see README, "Feature status").
import { loadConfig } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { createDb } from '../shared/db/knex.ts';
import { onShutdown } from '../shared/shutdown.ts';

const config = loadConfig();
const log = createLogger(config, 'mta');
const db = createDb(config);
await db.raw('select 1');
log.info({ submission: config.SMTP_SUBMISSION_PORT, submissionTls: config.SMTP_SUBMISSION_TLS_PORT }, 'mta.started_without_listeners');
const keepAlive = setInterval(() => {}, 1 << 30);

onShutdown(log, async () => {
  clearInterval(keepAlive);
  await db.destroy();
});
