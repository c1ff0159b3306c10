// `npm run build`'s dashboard step: `vite build` (web/vite.config.ts) into a directory of its own beside dist/web,
// then moved into place whole, so an api serving dist/web meanwhile (a test file running beside the one that builds)
// never finds it emptied or half-written. Two builds at once each move their own in; the last one stays. Nothing is
// built when dist/web was built from the same inputs (web/build-inputs.js): `npm start` after a build starts at once.
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtDigest, inputsDigest, STAMP } from './build-inputs.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(root, 'dist', 'web');
const digest = await inputsDigest(root);
if ((await builtDigest(root)) === digest) process.exit(0);
const out = `${target}.building-${process.pid}`;
const { build } = await import('vite');
await build({
  configFile: path.join(root, 'web', 'vite.config.ts'),
  logLevel: 'warn',
  build: { outDir: out, emptyOutDir: true },
});
await writeFile(path.join(out, STAMP), `${digest}\n`);
const moved = [];
for (let attempt = 0; ; attempt++) {
  const old = `${target}.old-${process.pid}-${attempt}`;
  const asideNow = await rename(target, old).then(
    () => true,
    () => false, // none there (the first build, or another build's move in between)
  );
  if (asideNow) moved.push(old);
  try {
    await rename(out, target);
    break;
  } catch (err) {
    // Another build moved its directory in between the two renames: move that one aside too.
    if (attempt >= 10) throw err;
  }
}
await Promise.all(moved.map((dir) => rm(dir, { recursive: true, force: true })));
