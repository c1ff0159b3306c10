// The operator CLI as operators run it: a real subprocess on the api's database, its effect read through the api.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { runCli, type CliRun } from './helpers/cli.ts';

let p: Platform;

test.before(async () => {
  p = await startPlatform();
});

test.after.always(async () => {
  await p?.close();
});

type Run = CliRun;

const cli = (...args: string[]): Promise<Run> => runCli({ DATABASE_URL: p.config.DATABASE_URL }, ...args);

/** A successful command: exit 0, one JSON document on stdout, nothing on stderr. */
function ok(t: import('ava').ExecutionContext, run: Run) {
  t.is(run.code, 0, run.stderr);
  t.is(run.stderr, '');
  return JSON.parse(run.stdout);
}

test('team create prints the team and a working full_access key', async (t) => {
  const out = ok(t, await cli('team', 'create', '--name', 'Acme Mail'));
  t.like(out.team, { object: 'team', name: 'Acme Mail', status: 'active' });
  t.regex(out.team.id, /^[0-9a-f-]{36}$/);
  t.regex(out.api_key, /^rk_[0-9A-Za-z]{43}$/);

  const team = await p.request('GET', '/team', { key: out.api_key });
  t.is(team.status, 200, team.text);
  t.is(team.body.id, out.team.id);
  t.is(team.body.name, 'Acme Mail');
  const keys = await p.request('GET', '/api-keys', { key: out.api_key });
  t.is(keys.body.data.length, 1);
  t.is(keys.body.data[0].permission, 'full_access');
});

test('team set-rate-limit changes the reported and the enforced limit', async (t) => {
  const team = await p.createTeam('Limited');
  const before = await p.request('GET', '/team', { key: team.key });
  t.is(before.body.sending.rate_limit.requests_per_second, p.config.RATE_LIMIT_RPS);
  t.not(p.config.RATE_LIMIT_RPS, 3);

  const out = ok(t, await cli('team', 'set-rate-limit', '--team', team.id, '--rps', '3'));
  t.is(out.team.rate_limit_rps, 3);

  const after = await p.request('GET', '/team', { key: team.key });
  t.is(after.body.sending.rate_limit.requests_per_second, 3);
  t.is(after.headers.get('ratelimit-limit'), '3');
  // Ten at once: a one-second window (whole seconds of the clock) lets at most 3 through, or 6 if the burst straddles
  // two windows. On a loaded machine ten requests may take longer than that to be answered: such a burst is sent again.
  let burst: Awaited<ReturnType<typeof p.request>>[] = [];
  for (let attempt = 0; attempt < 5; attempt++) {
    const started = Date.now();
    burst = await Promise.all(Array.from({ length: 10 }, () => p.request('GET', '/team', { key: team.key })));
    if (Math.floor(Date.now() / 1000) - Math.floor(started / 1000) < 2) break;
  }
  const passed = burst.filter((r) => r.status === 200).length;
  const limited = burst.filter((r) => r.status === 429);
  t.true(passed <= 6, `${passed} of 10 passed`);
  t.true(limited.length >= 4, `${limited.length} of 10 limited`);
  t.true(limited.every((r) => r.body.name === 'rate_limit_exceeded'));
});

test("team suspend refuses the team's keys with 403 suspended_api_key; team unsuspend lets them in again", async (t) => {
  const team = await p.createTeam('Suspendable');
  t.is((await p.request('GET', '/team', { key: team.key })).status, 200);

  t.is(ok(t, await cli('team', 'suspend', '--team', team.id)).team.status, 'suspended');
  const refused = await p.request('GET', '/team', { key: team.key });
  t.is(refused.status, 403);
  t.is(refused.body.name, 'suspended_api_key');

  t.is(ok(t, await cli('team', 'unsuspend', '--team', team.id)).team.status, 'active');
  const back = await p.request('GET', '/team', { key: team.key });
  t.is(back.status, 200);
  t.is(back.body.status, 'active');
});

test('team sandbox-lift takes one region out of sending.sandbox_regions', async (t) => {
  const team = await p.createTeam('Sandboxed');
  const before = (await p.request('GET', '/team', { key: team.key })).body.sending.sandbox_regions as string[];
  t.true(before.includes('eu-west-1'));
  t.true(before.length > 1);

  const out = ok(t, await cli('team', 'sandbox-lift', '--team', team.id, '--region', 'eu-west-1'));
  t.false(out.team.sandbox_regions.includes('eu-west-1'));

  const after = (await p.request('GET', '/team', { key: team.key })).body.sending.sandbox_regions;
  t.deepEqual(
    after,
    before.filter((r) => r !== 'eu-west-1'),
  );
});

test('bad input exits non-zero with a JSON error on stderr and no stack trace', async (t) => {
  const team = await p.createTeam('Untouched');
  const before = (await p.request('GET', '/team', { key: team.key })).body;
  const cases: [string, string[]][] = [
    ['unknown command', ['team', 'explode', '--team', team.id]],
    ['no command', []],
    ['missing --name', ['team', 'create']],
    ['--name without a value', ['team', 'create', '--name']],
    ['non-uuid --team', ['team', 'suspend', '--team', 'acme']],
    ['missing --team', ['team', 'suspend']],
    ['unknown team', ['team', 'suspend', '--team', randomUUID()]],
    ['unknown region', ['team', 'sandbox-lift', '--team', team.id, '--region', 'mars-north-1']],
    ['rps 0', ['team', 'set-rate-limit', '--team', team.id, '--rps', '0']],
    ['rps not a number', ['team', 'set-rate-limit', '--team', team.id, '--rps', 'fast']],
    ['send limit 0', ['team', 'set-send-limits', '--team', team.id, '--daily', '0']],
    ['no send limit given', ['team', 'set-send-limits', '--team', team.id]],
  ];
  const runs = await Promise.all(cases.map(([, args]) => cli(...args)));
  cases.forEach(([label], i) => {
    const run = runs[i];
    t.not(run.code, 0, `${label}: exit code`);
    t.is(run.stdout, '', `${label}: nothing on stdout`);
    let error: unknown;
    try {
      error = JSON.parse(run.stderr);
    } catch {
      t.fail(`${label}: stderr is not one JSON document: ${run.stderr}`);
      return;
    }
    t.is(typeof (error as { error?: unknown }).error, 'string', `${label}: ${run.stderr}`);
    t.false(/\n\s+at /.test(run.stderr), `${label}: a stack trace on stderr: ${run.stderr}`);
    t.false(run.stderr.includes('unexpected'), `${label}: reported as an unexpected failure: ${run.stderr}`);
  });
  // None of the refused commands changed the team.
  const after = await p.request('GET', '/team', { key: team.key });
  t.is(after.status, 200);
  t.deepEqual(after.body, before);
});

test('team set-send-limits sets the daily and monthly send limits the send path enforces', async (t) => {
  const team = await p.createTeam();
  const out = ok(t, await cli('team', 'set-send-limits', '--team', team.id, '--daily', '100', '--monthly', '3000'));
  t.deepEqual(out.team, { id: team.id, daily_send_limit: 100, monthly_send_limit: 3000 });
  const cleared = ok(t, await cli('team', 'set-send-limits', '--team', team.id, '--daily', 'none'));
  t.deepEqual(cleared.team, { id: team.id, daily_send_limit: null, monthly_send_limit: 3000 });
  t.like(await p.db('teams').where({ id: team.id }).first(), { daily_send_limit: null, monthly_send_limit: 3000 });
});
