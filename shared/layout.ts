// Where the running code lives. Two layouts of the same files: the TypeScript sources run through tsx (the tests,
// `npm run dev`, the operator commands), and the build in dist/ that `npm run build` emits (tsconfig.build.json)
// and production runs with plain node (`npm start`, the systemd units). Code that names another file of the
// project (a child process, a worker thread, the migrations, package.json) asks here, so it names the file of
// the layout it runs in.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);

/** This process runs the build (dist/**.js), not the sources: this very file says which, by its own extension. */
export const compiled = here.endsWith('.js');

/** The repository root (package.json, node_modules, .env): dist/shared/ is one folder deeper than shared/. */
export const root = path.resolve(path.dirname(here), compiled ? '../..' : '..');

/**
 * The file that runs for a source path relative to the root, in this layout: `api/main.ts` is itself under tsx and
 * `dist/api/main.js` when compiled (a folder, `migrations`, maps to `dist/migrations`).
 */
export function codePath(source: string): string {
  return compiled ? path.join(root, 'dist', source.replace(/\.ts$/, '.js')) : path.join(root, source);
}

/** The node arguments that load a file of this layout: tsx's loader for the sources, nothing for the build. */
export const loaderArgs: readonly string[] = compiled ? [] : ['--import', 'tsx'];
