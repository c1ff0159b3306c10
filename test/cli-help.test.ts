// The CLI as a newcomer meets it: help for every command, flags checked before anything runs, a team list and a
// new key for a team whose first key is lost; a database it cannot reach is one JSON line naming DATABASE_URL.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { runCli } from './helpers/cli.ts';
import { cliCommands } from '../shared/cli/commands.ts';

let p: Platform;

test.before(async () => {
  p = await startPlatform();
});

test.after.always(async () => {
  await p?.close();
});

const cli = (...args: string[]) => runCli({ DATABASE_URL: p.config.DATABASE_URL, ENV_FILE: 'none' }, ...args);

test('--help lists every command with one line each; each command lists every flag', async (t) => {
  const all = await cli('--help');
  t.is(all.code, 0, all.stderr);
  for (const [name, c] of Object.entries(cliCommands)) {
    t.true(
      all.stdout.split('\n').some((l) => l.includes(name) && l.includes(c.summary)),
      `${name} in --help`,
    );
    const one = await cli(...name.split(' '), '--help');
    t.is(one.code, 0, `${name} --help: ${one.stderr}`);
    for (const [flag, spec] of Object.entries(c.flags)) {
      const line = one.stdout.split('\n').find((l) => l.trimStart().startsWith(`--${flag}`));
      t.truthy(line, `${name}: --${flag} listed`);
      t.true(line!.includes(spec.help), `${name}: --${flag} has its help on its line`);
    }
  }
  t.regex((await cli('help')).stdout, /^usage: npm run cli/);
});

test('unknown flags, missing required flags and a switch without its value are refused before anything runs', async (t) => {
  const cases: [string[], RegExp][] = [
    [['team', 'create', '--nme', 'x'], /unknown flag --nme/],
    [['team', 'create'], /--name is required/],
    [['team', 'set-rate-limit', '--team'], /--team needs a value/],
    [['api-key', 'create', '--team', 'nope'], /--team must be a team id/],
  ];
  for (const [args, message] of cases) {
    const run = await cli(...args);
    t.is(run.code, 2, args.join(' '));
    t.is(run.stdout, '');
    t.regex(JSON.parse(run.stderr).error, message);
  }
});

test('team list shows every team with its managed domain; api-key create gives a team a new working key', async (t) => {
  const team = await p.createTeam('Lost its key');
  const list = await cli('team', 'list');
  t.is(list.code, 0, list.stderr);
  const row = JSON.parse(list.stdout).data.find((x: { id: string }) => x.id === team.id);
  t.like(row, { object: 'team', name: 'Lost its key', status: 'active' });
  t.regex(row.managed_domain, new RegExp(`\\.${p.config.MANAGED_DOMAIN_HOST.replace(/\./g, '\\.')}$`));

  const made = await cli('api-key', 'create', '--team', team.id, '--name', 'Recovered');
  t.is(made.code, 0, made.stderr);
  const key = JSON.parse(made.stdout);
  t.like(key, { name: 'Recovered', permission: 'full_access', team_id: team.id });
  const me = await p.request('GET', '/team', { key: key.token });
  t.is(me.status, 200);
  t.is(me.body.id, team.id);

  const sending = JSON.parse(
    (await cli('api-key', 'create', '--team', team.id, '--permission', 'sending_access')).stdout,
  );
  t.is((await p.request('GET', '/api-keys', { key: sending.token })).status, 401);
  const unknown = await cli('api-key', 'create', '--team', '00000000-0000-4000-8000-000000000000');
  t.is(unknown.code, 2);
  t.regex(JSON.parse(unknown.stderr).error, /not found/i);
});

test('a database it cannot reach: one JSON error naming DATABASE_URL, exit 2, no stack', async (t) => {
  const run = await runCli({ DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none', ENV_FILE: 'none' }, 'team', 'list');
  t.is(run.code, 2);
  t.regex(JSON.parse(run.stderr).error, /cannot reach PostgreSQL at DATABASE_URL/);
  t.false(/\n\s+at /.test(run.stderr));
});
