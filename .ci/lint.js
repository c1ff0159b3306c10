// `npm run lint`: formatting, the two type checks, eslint and the OpenAPI lint, two at a time (each is one
// process on one core; CI machines have two). The first type check also emits the sources and the tests as
// JavaScript into dist-test/ (tsconfig.test.json), which `npm test` then runs: emitting adds next to nothing to it.
// Longest first, so the short ones fill in beside the long ones. Each step's output is printed whole when it ends,
// after its name; the exit code is 1 when any step failed.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const steps = [
  ['tsc', ['tsc', '-p', 'tsconfig.test.json']],
  ['eslint', ['eslint', '.']],
  ['prettier', ['prettier', '--check', '.']],
  ['tsc -p web', ['tsc', '--noEmit', '-p', 'web']],
  ['openapi', ['npm', 'run', '--silent', 'lint:openapi']],
];
const parallel = Math.max(1, Number(process.env.LINT_CONCURRENCY ?? 2));

function run([name, [command, ...args]]) {
  const started = Date.now();
  const bin = command === 'npm' ? 'npm' : path.join(root, 'node_modules', '.bin', command);
  return new Promise((resolve) => {
    const child = spawn(bin, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (err) => (out += `${err.message}\n`));
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`${code === 0 ? 'ok  ' : 'FAIL'} ${name} (${seconds} s)\n${out}`);
      resolve(code === 0);
    });
  });
}

const queue = [...steps];
const results = [];
await Promise.all(
  Array.from({ length: parallel }, async () => {
    while (queue.length) results.push(await run(queue.shift()));
  }),
);
process.exitCode = results.every(Boolean) ? 0 : 1;
