// The dashboard's build is skipped when nothing it is made from changed (web/build-inputs.js): the digest follows
// every file of web/, package-lock.json and NODE_ENV, and `node web/build.js` leaves a build made from the same inputs
// as it is.
import test from 'ava';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { root } from '../shared/layout.ts';
import { buildDashboard, buildInputs as inputs } from './helpers/dashboard.ts';

test('the digest changes with a file of web/, the lock file and NODE_ENV, and only with them', async (t) => {
  const { inputsDigest, builtDigest } = await inputs();
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-web-inputs-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cp(path.join(root, 'web'), path.join(dir, 'web'), { recursive: true });
  await writeFile(path.join(dir, 'package-lock.json'), '{"lockfileVersion":3}');
  const env = { NODE_ENV: 'production' };
  const first = await inputsDigest(dir, env);
  t.regex(first, /^[0-9a-f]{64}$/);
  t.is(await inputsDigest(dir, env), first, 'the same inputs, the same digest');
  t.not(await inputsDigest(dir, { NODE_ENV: 'test' }), first, 'NODE_ENV');

  await writeFile(path.join(dir, 'web', 'src', 'new-page.tsx'), 'export const x = 1;\n');
  const added = await inputsDigest(dir, env);
  t.not(added, first, 'a file added under web/src');
  await writeFile(path.join(dir, 'web', 'src', 'new-page.tsx'), 'export const x = 2;\n');
  t.not(await inputsDigest(dir, env), added, "a file's content");
  await rm(path.join(dir, 'web', 'src', 'new-page.tsx'));
  t.is(await inputsDigest(dir, env), first, 'back as it was');

  await writeFile(path.join(dir, 'package-lock.json'), '{"lockfileVersion":3,"packages":{}}');
  const locked = await inputsDigest(dir, env);
  t.not(locked, first, 'the locked versions');
  // Outside web/ and the lock file: not an input.
  await writeFile(path.join(dir, 'README.md'), 'changed');
  t.is(await inputsDigest(dir, env), locked, 'a file outside web/');
  await mkdir(path.join(dir, 'dist', 'web'), { recursive: true });
  t.is(await builtDigest(dir), null, 'a build without its stamp is not taken as up to date');
});

test('node web/build.js builds nothing when dist/web was built from the same inputs', async (t) => {
  t.timeout(300_000);
  const { inputsDigest, builtDigest } = await inputs();
  await buildDashboard();
  const production = { NODE_ENV: 'production' };
  t.is(await builtDigest(root), await inputsDigest(root, production));
  const index = path.join(root, 'dist', 'web', 'index.html');
  const before = await stat(index);
  const { NODE_OPTIONS: _preload, ...env } = process.env;
  await promisify(execFile)(process.execPath, [path.join(root, 'web', 'build.js')], {
    cwd: root,
    env: { ...env, ...production },
  });
  const after = await stat(index);
  t.is(after.ino, before.ino, 'the same build in place, not one moved in');
  t.is(after.mtimeMs, before.mtimeMs);
});
