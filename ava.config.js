import { readdirSync } from 'node:fs';
import path from 'node:path';

// The longest test files start first (four at a time), so they run beside the many short ones instead of being left
// alone at the end of the run; the rest follow in name order. Measured one file at a time (docs/testing.md): the
// files that start the real processes, Chromium or Postfix. A file missing from the list only starts later.
const slowFirst = [
  'quick-start',
  'oauth-mcp-e2e',
  'dashboard-audience-imports',
  'broadcasts-processes',
  'dashboard-ops',
  'accounts-browser',
  'compiled',
  'process-kills',
  'dashboard-browser',
  'dashboard-settings',
  'oauth',
  'contact-imports-kill',
  'dashboard-templates',
  'launcher',
  'mta-crash',
  'startup',
  'dashboard-audience',
  'observability',
  // Not timed alone yet: like the other browser files (a platform, its worker, Chromium).
  'dashboard-audience-segments',
  'dashboard-emails',
  'dashboard-ops-domains',
  'dashboard-ops-received',
  'dashboard-settings-account',
  'dashboard-settings-keyboard',
  'dashboard-templates-bad-input',
  'dashboard-keys-teams',
  'dashboard-keyboard',
  'dashboard-keyboard-auth',
  'tracking-browser',
  'webhooks-worker',
  'mta-postfix',
];
const rank = (file) => {
  const i = slowFirst.findIndex((name) => new RegExp(`/${name}\\.test\\.[jt]s$`).test(file));
  return i === -1 ? slowFirst.length : i;
};

// `npm test` runs the suite compiled (TEST_COMPILED=1): the lint's type check emits the sources and the tests into
// dist-test/ (tsconfig.test.json), and every test file and every process a test starts runs that JavaScript with
// plain node, as production runs dist/ (shared/layout.ts). tsx's loader costs each process about 2 s of CPU more
// (docs/testing.md). `npx ava test/<file>.test.ts` runs the sources through tsx, with nothing to build first.
const compiled = process.env.TEST_COMPILED === '1';
/** Compiled: the test files of test/ as dist-test/ has them (one left by a deleted or renamed source: not run). */
const compiledFiles = () =>
  readdirSync(path.join(import.meta.dirname, 'test'))
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `dist-test/test/${f.slice(0, -'.ts'.length)}.js`);

export default {
  files: compiled ? compiledFiles() : ['test/**/*.test.ts'],
  ...(compiled ? {} : { extensions: { ts: 'module' }, nodeArguments: ['--import=tsx'] }),
  timeout: '60s',
  concurrency: 4,
  workerThreads: false,
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b),
};
