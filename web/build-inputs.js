// What the dashboard's build is made from: every file of web/, the locked versions of the packages it bundles
// (package-lock.json) and NODE_ENV (a build under NODE_ENV=test is React's development build). Their digest is kept
// beside the build (dist/web/.inputs), so `npm run build` and the tests' helper build again only when one changed,
// whatever the files' times say (a fresh clone, a checkout, a copy).
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export const STAMP = '.inputs';

async function filesUnder(dir, base = dir) {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(full, base)));
    else if (entry.isFile()) found.push(path.relative(base, full));
  }
  return found;
}

/** The digest of the build's inputs under `root` (the project's directory). */
export async function inputsDigest(root, env = process.env) {
  const web = path.join(root, 'web');
  const hash = createHash('sha256').update(`NODE_ENV=${env.NODE_ENV ?? ''}\0`);
  for (const name of (await filesUnder(web)).sort()) {
    hash.update(`web/${name.split(path.sep).join('/')}\0`).update(await readFile(path.join(web, name)));
  }
  hash.update('package-lock.json\0').update(await readFile(path.join(root, 'package-lock.json')).catch(() => ''));
  return hash.digest('hex');
}

/** The digest dist/web was built from, or null when there is no build (or one made before the stamp). */
export const builtDigest = (root) =>
  readFile(path.join(root, 'dist', 'web', STAMP), 'utf8').then(
    (s) => s.trim(),
    () => null,
  );
