// A process as the mains are built (tests of shared/shutdown.ts): it traps the signals first, "starts" for
// START_MS, then hands over its stop. SIGNAL_AT (`starting`, twice `starting-twice`) sends itself SIGTERM while
// it starts; otherwise the test signals it once it printed `started`. Prints each step on stdout. STALL=1: its stop
// ends its last timer and then waits on a promise nothing settles (it logs only when LOG_LEVEL=info).
import { trapShutdown } from '../../shared/shutdown.ts';
import { createLogger } from '../../shared/logger.ts';

const shutdown = trapShutdown(
  createLogger({ LOG_LEVEL: process.env.LOG_LEVEL === 'info' ? 'info' : 'silent' }, 'test'),
);
const say = (line: string) => process.stdout.write(`${line}\n`);
if (process.env.SIGNAL_AT === 'starting') process.kill(process.pid, 'SIGTERM');
if (process.env.SIGNAL_AT === 'starting-twice') {
  process.kill(process.pid, 'SIGTERM');
  setTimeout(() => process.kill(process.pid, 'SIGTERM'), 50);
}
// Work under way while starting (a worker's job, say): it must be let finish.
await new Promise((resolve) => setTimeout(resolve, Number(process.env.START_MS ?? 300)));
say('started');
// A started process keeps running until it is stopped.
const alive = setInterval(() => {}, 1000);
shutdown.ready(async (step) => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  if (process.env.STALL) {
    step('waiting on nothing');
    clearInterval(alive);
    await new Promise(() => {});
  }
  say('stopped');
});
