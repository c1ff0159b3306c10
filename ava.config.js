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
  const i = slowFirst.findIndex((name) => file.endsWith(`/${name}.test.ts`));
  return i === -1 ? slowFirst.length : i;
};

export default {
  files: ['test/**/*.test.ts'],
  extensions: { ts: 'module' },
  nodeArguments: ['--import=tsx'],
  timeout: '60s',
  concurrency: 4,
  workerThreads: false,
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b),
};
