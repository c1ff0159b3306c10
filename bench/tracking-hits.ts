// The hit generator of the tracking suite, as a process of its own (bench/tracking-load.ts starts it): autocannon
// at a steady rate against the tracking listener, real recipients' paths in turn (a file of one path a line). Its own
// event loop: the open-loop POST /emails client of the bench process is not slowed by 2,000 requests a second beside
// it. Prints autocannon's result as one JSON line.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { lowerPriority } from '../shared/priority.ts';

// The generator stands for browsers on other machines: at nice 19 it takes only the CPU the platform leaves, so the
// suite measures what the hits cost the api and PostgreSQL rather than the generator's own half core beside them.
lowerPriority(19);

const [port, host, pathsFile, rate, seconds, userAgent] = process.argv.slice(2);
const paths = readFileSync(pathsFile, 'utf8').split('\n').filter(Boolean);
let next = 0;
const r = await autocannon({
  url: `http://127.0.0.1:${port}`,
  connections: 50,
  duration: Number(seconds),
  overallRate: Number(rate),
  timeout: 10,
  requests: [
    {
      method: 'GET',
      headers: { host, 'user-agent': userAgent },
      setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] }),
    },
  ],
});
process.stdout.write(`${JSON.stringify(r)}\n`);
