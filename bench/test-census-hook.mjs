// A preloaded module (`NODE_OPTIONS=--import=./bench/test-census-hook.mjs`) for measuring where a test run's CPU goes:
// every node process that loads it appends one JSON line to $TEST_CENSUS_LOG at its exit: its pid and parent, the
// test file when it is one of ava's workers (ava's first IPC message names it), its start and end, and its CPU and
// that of the children it reaped (/proc/self/stat, in seconds). bench/test-census-report.ts reads the file. Linux only.
import { appendFileSync, readFileSync } from 'node:fs';

const log = process.env.TEST_CENSUS_LOG;
const start = Date.now();
let file = null;
const onMessage = (m) => {
  if (m?.ava?.type !== 'options') return;
  file = m.ava.options.file;
  process.off('message', onMessage);
};
if (log && process.send) {
  process.on('message', onMessage);
  // Listening must not keep a process alive that would otherwise end.
  process.channel?.unref();
}
if (log)
  process.on('exit', () => {
    try {
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (i) => Number(f[i]) / 100; // clock ticks (USER_HZ, 100 on Linux)
      const argv = process.argv.slice(1, 4).join(' ').slice(0, 200);
      const line = { pid: process.pid, ppid: process.ppid, file, argv, start, end: Date.now() };
      Object.assign(line, { user: seconds(11), system: seconds(12), childUser: seconds(13), childSystem: seconds(14) });
      appendFileSync(log, `${JSON.stringify(line)}\n`);
    } catch {
      // a census line is never worth failing a test for
    }
  });
