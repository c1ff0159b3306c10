// The setup steps alone (setup.ts), for a host whose processes run as their own systemd units: the oneshot
// postwerk-setup.service runs `node dist/shared/launcher/setup-cli.js --key-file <file>` before them on every
// start. A unit's output goes to the journal, which keeps it and which more people read than should hold a
// full_access key: with --key-file the first team's notice goes to that file (mode 0600, for the operator to read
// once and delete) and the journal only says where. Without it the notice is printed. `npm start`'s launcher uses
// --key-file too, and prints the notice itself once the api answers.
import { rmSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { starting } from '../startup.ts';
import { setUp } from './setup.ts';
import { welcome } from './welcome.ts';

const { values } = parseArgs({ options: { 'key-file': { type: 'string' } } });
const keyFile = values['key-file'];

const config = readConfig('setup');
const log = createLogger(config, 'setup');
const first = await starting(log, () => setUp(config, log));
if (first && keyFile) {
  // A file left by an earlier first run belongs to a database that is gone: replaced, never written through.
  rmSync(keyFile, { force: true });
  writeFileSync(keyFile, welcome(first, config), { mode: 0o600, flag: 'wx' });
  log.info({ team_id: first.team.id, key_file: keyFile }, 'first_team.created');
} else if (first) {
  process.stdout.write(welcome(first, config));
}
