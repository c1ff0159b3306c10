// shared/shutdown.ts as every process uses it: a SIGTERM stops a started process cleanly (its stop runs, exit 0);
// one that arrives while the process is still starting is kept, and the process stops cleanly once started
// instead of dying half-way; a second signal exits at once; a stop left waiting on nothing says so and exits 1.
import test from 'ava';
import { spawn } from 'node:child_process';
import { codePath, loaderArgs } from '../shared/layout.ts';

const child = codePath('test/helpers/shutdown-child.ts');

function run(
  env: Record<string, string>,
  onLine?: (line: string, kill: () => void) => void,
): Promise<{ code: number | null; signal: string | null; lines: string[] }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...loaderArgs, child], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines: string[] = [];
    let buffered = '';
    p.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
        lines.push(line);
        onLine?.(line, () => p.kill('SIGTERM'));
      }
    });
    p.on('error', reject);
    p.on('exit', (code, signal) => resolve({ code, signal, lines }));
  });
}

test('a SIGTERM to a started process runs its stop and exits 0', async (t) => {
  const r = await run({}, (line, kill) => line === 'started' && kill());
  t.deepEqual(r.lines, ['started', 'stopped']);
  t.is(r.code, 0);
});

test('a SIGTERM while the process starts is kept: it finishes starting, then stops cleanly', async (t) => {
  const r = await run({ SIGNAL_AT: 'starting' });
  t.deepEqual(r.lines, ['started', 'stopped']);
  t.is(r.code, 0);
});

test('a second signal while starting exits at once, without waiting for the start', async (t) => {
  const r = await run({ SIGNAL_AT: 'starting-twice', START_MS: '5000' });
  t.deepEqual(r.lines, []);
  t.is(r.code, 1);
});

test('a stop that waits on what nothing can settle is logged with its step and exits 1, not 0 in silence', async (t) => {
  const r = await run({ STALL: '1', LOG_LEVEL: 'info' }, (line, kill) => line === 'started' && kill());
  const stalled = r.lines.map((l) => (l.startsWith('{') ? JSON.parse(l) : { msg: l })).find((l) => l.level >= 50);
  t.like(stalled, { msg: 'process.stop_stalled', step: 'waiting on nothing' });
  t.false(r.lines.includes('stopped'));
  t.is(r.code, 1);
});
