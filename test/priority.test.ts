// shared/priority.ts as the mta uses it: every thread of the process runs at the lowered priority, those that
// existed before the call and those made after it; the real mta process runs at MTA_NICE, the worker at WORKER_NICE.
// Linux only (/proc).
import test from 'ava';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startEntry } from './helpers/processes.ts';

/** The nice value of each thread of `pid` (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The command name may hold spaces: the fields after it start past its closing parenthesis (field 3 on).
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

let p: Platform | undefined;
test.after.always(async () => {
  await p?.close();
});

test('lowerPriority: the threads that exist and a worker thread made afterwards all run at the new nice value', async (t) => {
  const script = `
    import { Worker } from 'node:worker_threads';
    import { readdirSync, readFileSync } from 'node:fs';
    import { lowerPriority } from './shared/priority.ts';
    const before = readdirSync('/proc/self/task').length;
    lowerPriority(7);
    const w = new Worker('setInterval(() => {}, 1000)', { eval: true });
    await new Promise((r) => w.once('online', r));
    const nices = readdirSync('/proc/self/task').map((tid) => {
      const s = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
      return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[16]);
    });
    console.log(JSON.stringify({ before, nices }));
    await w.terminate();`;
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    script,
  ]);
  const { before, nices } = JSON.parse(stdout) as { before: number; nices: number[] };
  t.true(before > 1, 'node already runs helper threads before the call');
  t.true(nices.length > before, 'the worker thread is among them');
  t.deepEqual([...new Set(nices)], [7]);
});

test.serial('the mta process runs every thread at MTA_NICE (10 unless configured)', async (t) => {
  t.timeout(150_000);
  p ??= await startPlatform();
  const mta = startEntry('mta/main.ts', p.config, { SMTP_SUBMISSION_PORT: '0', SMTP_SUBMISSION_TLS_PORT: '0' });
  try {
    await mta.logged('mta.started', 120_000);
    t.deepEqual([...new Set(threadNices(mta.pid))], [10]);
  } finally {
    await mta.stop();
  }
});

test.serial('the worker process runs every thread at WORKER_NICE (here 12)', async (t) => {
  t.timeout(150_000);
  p ??= await startPlatform();
  const worker = startEntry('worker/main.ts', p.config, { WORKER_NICE: '12' });
  try {
    await worker.logged('worker.started', 120_000);
    t.deepEqual([...new Set(threadNices(worker.pid))], [12]);
  } finally {
    await worker.stop();
  }
});
