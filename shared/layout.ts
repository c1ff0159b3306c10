// Where the running code lives. Two layouts of the same files: the TypeScript sources run through tsx (the tests,
// `npm run dev`, the operator commands), and the build in dist/ that `npm run build` emits (tsconfig.build.json)
// and production runs with plain node (`npm start`, the systemd units); `npm test` runs a third, the same build of
// the sources and the tests in dist-test/ (tsconfig.test.json). Code that names another file of the project (a child
// process, a worker thread, the migrations, package.json, a file that is not TypeScript) asks here, so it names the
// file of the layout it runs in.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);

/** This process runs the build (dist/**.js), not the sources: this very file says which, by its own extension. */
export const compiled = here.endsWith('.js');

/** The repository root (package.json, node_modules, .env): dist/shared/ is one folder deeper than shared/. */
export const root = path.resolve(path.dirname(here), compiled ? '../..' : '..');

/** The folder of the code that runs: the root for the sources, the build's own (dist/ or dist-test/) when compiled. */
const tree = compiled ? path.resolve(path.dirname(here), '..') : root;

/**
 * The file that runs for a source path relative to the root, in this layout: `api/main.ts` is itself under tsx and
 * `dist/api/main.js` when compiled (a folder, `migrations`, maps to `dist/migrations`).
 */
export function codePath(source: string): string {
  return path.join(tree, compiled ? source.replace(/\.ts$/, '.js') : source);
}

/** A file that is not code (a stylesheet, a browser script) by its path in the sources: the build does not copy it. */
export const assetPath = (source: string): string => path.join(root, source);

/** The node arguments that load a file of this layout: tsx's loader for the sources, nothing for the build. */
export const loaderArgs: readonly string[] = compiled ? [] : ['--import', 'tsx'];
