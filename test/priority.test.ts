// shared/priority.ts as the mta uses it: every thread of the process runs at the lowered priority, those that
// existed before the call and those made after it, but a thread it is told to leave; the real mta process runs at
// MTA_NICE but for its submission thread (at the process's own priority), the inbound at INBOUND_NICE but for its
// MX thread, the worker at WORKER_NICE. Linux only.
import test from 'ava';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';

/** The nice value of a thread of `pid` (field 19 of /proc/<pid>/task/<tid>/stat). */
function niceOf(pid: number, tid: number | string): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  // The command name may hold spaces: the fields after it start past its closing parenthesis (field 3 on).
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** The nice value of each thread of `pid` but those in `except`. */
function threadNices(pid: number, except: number[] = []): number[] {
  return readdirSync(`/proc/${pid}/task`)
    .filter((tid) => !except.includes(Number(tid)))
    .map((tid) => niceOf(pid, tid));
}

/** Runs an ES module script under tsx from the repository root; answers its standard output parsed as JSON. */
async function runScript(script: string): Promise<unknown> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    script,
  ]);
  return JSON.parse(stdout);
}

/** The same as niceOf, as source for those scripts: the nice value of a thread of this process. */
const NICE_OF = `(tid) => { const s = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
  return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[16]); }`;

/** The kernel thread id a process's log line `msg` names (`thread`), or null. */
function loggedThread(entry: EntryProcess, msg: string): number | null {
  const line = entry
    .output()
    .split('\n')
    .map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg: string; thread?: number }) : null))
    .find((l) => l?.msg === msg);
  return typeof line?.thread === 'number' ? line.thread : null;
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
    const nices = readdirSync('/proc/self/task').map(${NICE_OF});
    console.log(JSON.stringify({ before, nices }));
    await w.terminate();`;
  const { before, nices } = (await runScript(script)) as { before: number; nices: number[] };
  t.true(before > 1, 'node already runs helper threads before the call');
  t.true(nices.length > before, 'the worker thread is among them');
  t.deepEqual([...new Set(nices)], [7]);
});

test('lowerPriority leaves the threads it is told to leave', async (t) => {
  const script = `
    import { Worker } from 'node:worker_threads';
    import { readFileSync } from 'node:fs';
    import { lowerPriority } from './shared/priority.ts';
    const w = new Worker(
      "Promise.all([import('node:worker_threads'), import('node:fs')]).then(([w, fs]) => {" +
      "w.parentPort.postMessage(Number(fs.readlinkSync('/proc/thread-self').split('/').pop()));" +
      "setInterval(() => {}, 1000); })", { eval: true });
    const tid = await new Promise((r) => w.once('message', r));
    lowerPriority(5, undefined, [tid]);
    const nice = ${NICE_OF};
    console.log(JSON.stringify({ left: nice(tid), main: nice(process.pid) }));
    await w.terminate();`;
  t.deepEqual(await runScript(script), { left: 0, main: 5 });
});

test.serial('the mta runs every thread at MTA_NICE (10 unless configured) but its submission thread', async (t) => {
  t.timeout(150_000);
  p ??= await startPlatform();
  const mta = startEntry('mta/main.ts', p.config, { SMTP_SUBMISSION_PORT: '0', SMTP_SUBMISSION_TLS_PORT: '0' });
  try {
    await mta.logged('mta.started', 120_000);
    const tid = loggedThread(mta, 'submission.listening');
    if (tid === null) return t.fail(`no submission thread id in the log: ${mta.output().slice(-1000)}`);
    t.not(tid, mta.pid, 'the submission listeners run in a thread of their own');
    t.is(niceOf(mta.pid, tid), 0, 'the submission thread keeps the priority the process started with');
    t.deepEqual([...new Set(threadNices(mta.pid, [tid]))], [10]);
  } finally {
    await mta.stop();
  }
});

test.serial('the inbound process runs every thread at INBOUND_NICE (here 11) but its MX thread', async (t) => {
  t.timeout(150_000);
  p ??= await startPlatform();
  const inbound = startEntry('inbound/main.ts', p.config, { MX_PORT: '0', INBOUND_NICE: '11' });
  try {
    await inbound.logged('mx.listening', 120_000);
    const tid = loggedThread(inbound, 'mx.listening');
    if (tid === null) return t.fail(`no MX thread id in the log: ${inbound.output().slice(-1000)}`);
    t.not(tid, inbound.pid, 'the MX listener runs in a thread of its own');
    t.is(niceOf(inbound.pid, tid), 0, 'the MX thread keeps the priority the process started with');
    t.deepEqual([...new Set(threadNices(inbound.pid, [tid]))], [11]);
  } finally {
    await inbound.stop();
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
