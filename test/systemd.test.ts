// The systemd units as docs/processes.md installs them, checked offline, with no systemd running (CI runs in a
// container): `systemd-analyze verify` passes every unit and has nothing to say about any, `systemctl enable`
// installs the target and more copies through their [Install] sections, systemd-sysusers makes the service user
// from the sysusers.d file, and every unit runs a file the build makes and keeps its state in its StateDirectory=.
import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { root as ROOT } from '../shared/layout.ts';

const SYSTEMD = path.join(ROOT, 'systemd');
const NODE_IN_UNITS = '/usr/bin/node';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 127) : 0;
      resolve({ code, stdout, stderr: err && code === 127 ? `${stderr}${err.message}` : stderr });
    });
  });
}

async function unitFiles(): Promise<string[]> {
  return (await readdir(SYSTEMD)).filter((f) => f.endsWith('.service') || f.endsWith('.target')).sort();
}

/** The `key=value` settings of a unit file in order (comments and section headers left out). */
async function settings(file: string): Promise<[string, string][]> {
  const text = await readFile(path.join(SYSTEMD, file), 'utf8');
  return text
    .split('\n')
    .filter((l) => /^[A-Za-z]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
}

async function tempDir(t: { teardown(fn: () => Promise<void>): void }, prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('systemd-analyze verify passes every unit, with nothing to say about any', async (t) => {
  const files = await unitFiles();
  t.deepEqual(files, [
    'postwerk-api@.service',
    'postwerk-inbound@.service',
    'postwerk-mta@.service',
    'postwerk-setup.service',
    'postwerk-worker@.service',
    'postwerk.target',
  ]);
  // verify checks that each ExecStart program exists. The units name /usr/bin/node, where Debian's and NodeSource's
  // packages put it; the node running this test may live elsewhere (nvm, a tarball), so the units are verified as
  // copies whose only change is that path, pointed at this node. Their arguments (dist/*.js, relative to
  // WorkingDirectory=/opt/postwerk) are not looked at by verify: the next test checks them against the build.
  const dir = await tempDir(t, 'pw-units-');
  for (const file of files) {
    const text = await readFile(path.join(SYSTEMD, file), 'utf8');
    await writeFile(path.join(dir, file), text.replaceAll(`=${NODE_IN_UNITS} `, `=${process.execPath} `));
  }
  const verify = await run('systemd-analyze', ['verify', '--man=no', ...files.map((f) => path.join(dir, f))]);
  t.is(verify.code, 0, verify.stderr);
  // Unknown keys, bad values and missing programs are warnings that leave the exit code 0: any output fails.
  t.is(verify.stderr + verify.stdout, '');

  // The check itself sees a mistake: a misspelt key in a copy of a unit.
  const api = await readFile(path.join(dir, 'postwerk-api@.service'), 'utf8');
  await writeFile(path.join(dir, 'postwerk-typo@.service'), api.replace('RestartSec=', 'RestartSecs='));
  const typo = await run('systemd-analyze', ['verify', '--man=no', path.join(dir, 'postwerk-typo@.service')]);
  t.regex(typo.stderr, /Unknown key name 'RestartSecs'|Unknown key 'RestartSecs'/);
});

test('every unit runs /usr/bin/node on a file the build emits, from /opt/postwerk', async (t) => {
  const build = JSON.parse(await readFile(path.join(ROOT, 'tsconfig.build.json'), 'utf8'));
  const built: string[] = build.include;
  const commands: string[] = [];
  for (const file of (await unitFiles()).filter((f) => f.endsWith('.service'))) {
    const unit = await settings(file);
    t.deepEqual(
      unit.filter(([k]) => k === 'WorkingDirectory'),
      [['WorkingDirectory', '/opt/postwerk']],
      file,
    );
    const exec = unit.filter(([k]) => k === 'ExecStart').map(([, v]) => v);
    t.is(exec.length, 1, file);
    const [program, script] = exec[0].split(' ');
    t.is(program, NODE_IN_UNITS, file);
    // dist/<source>.js: the source exists and is in the build (tsconfig.build.json), so `npm run build` makes it.
    const match = /^dist\/(.+)\.js$/.exec(script);
    t.truthy(match, `${file}: ${script} is not a file of the build`);
    const source = `${match![1]}.ts`;
    t.true(existsSync(path.join(ROOT, source)), `${file}: ${source} does not exist`);
    t.true(
      built.some((dir) => source.startsWith(`${dir}/`)),
      `${file}: ${source} is not in tsconfig.build.json`,
    );
    t.notRegex(exec[0], /tsx/, file);
    commands.push(script);
  }
  t.deepEqual(commands.sort(), [
    'dist/api/main.js',
    'dist/inbound/main.js',
    'dist/mta/main.js',
    'dist/shared/launcher/setup-cli.js',
    'dist/worker/main.js',
  ]);
});

test('every service keeps its state in its StateDirectory, where BLOB_DIR and SECRETS_KEY_FILE point by default', async (t) => {
  for (const file of (await unitFiles()).filter((f) => f.endsWith('.service'))) {
    const unit = await settings(file);
    const value = (key: string) => unit.filter(([k]) => k === key).map(([, v]) => v);
    t.deepEqual(value('StateDirectory'), ['postwerk'], file);
    t.deepEqual(value('User'), ['postwerk'], file);
    const env = Object.fromEntries(
      value('Environment')
        .flatMap((v) => v.split(' '))
        .map((pair) => pair.split('=')),
    );
    t.is(env.BLOB_DIR, '/var/lib/postwerk/blobs', file);
    t.is(env.SECRETS_KEY_FILE, '/var/lib/postwerk/secrets.key', file);
    // The defaults come first: settings of /etc/postwerk/env override Environment= whatever the order, and the
    // order says so to a reader too.
    const keys = unit.map(([k]) => k);
    t.true(keys.lastIndexOf('Environment') < keys.indexOf('EnvironmentFile'), file);
  }
  const setup = await settings('postwerk-setup.service');
  t.regex(setup.find(([k]) => k === 'ExecStart')![1], / --key-file \/var\/lib\/postwerk\/[^ ]+$/);
});

test('systemctl enable installs the target with one copy of each process, and more copies through their [Install]', async (t) => {
  const root = await tempDir(t, 'pw-root-');
  const units = path.join(root, 'etc/systemd/system');
  await mkdir(units, { recursive: true });
  for (const file of await unitFiles()) await cp(path.join(SYSTEMD, file), path.join(units, file));
  const links = async (dir: string) =>
    Object.fromEntries(
      await Promise.all(
        (await readdir(path.join(units, dir)).catch(() => [])).map(async (f) => [
          f,
          await readlink(path.join(units, dir, f)),
        ]),
      ),
    );

  const enable = await run('systemctl', ['--root', root, 'enable', 'postwerk.target']);
  t.is(enable.code, 0, enable.stderr);
  t.deepEqual(await links('multi-user.target.wants'), { 'postwerk.target': '/etc/systemd/system/postwerk.target' });
  const one = {
    'postwerk-api@1.service': '/etc/systemd/system/postwerk-api@.service',
    'postwerk-mta@1.service': '/etc/systemd/system/postwerk-mta@.service',
    'postwerk-inbound@1.service': '/etc/systemd/system/postwerk-inbound@.service',
    'postwerk-worker@1.service': '/etc/systemd/system/postwerk-worker@.service',
  };
  t.deepEqual(await links('postwerk.target.wants'), one);

  const second = await run('systemctl', ['--root', root, 'enable', 'postwerk-api@2.service']);
  t.is(second.code, 0, second.stderr);
  t.deepEqual(await links('postwerk.target.wants'), {
    ...one,
    'postwerk-api@2.service': '/etc/systemd/system/postwerk-api@.service',
  });
  const off = await run('systemctl', [
    '--root',
    root,
    'disable',
    'postwerk-api@2.service',
    'postwerk-worker@1.service',
  ]);
  t.is(off.code, 0, off.stderr);
  const { 'postwerk-worker@1.service': _worker, ...rest } = one;
  t.deepEqual(await links('postwerk.target.wants'), rest);
});

test('systemd-sysusers makes the service user from systemd/sysusers.d/postwerk.conf', async (t) => {
  const root = await tempDir(t, 'pw-root-');
  await mkdir(path.join(root, 'etc/sysusers.d'), { recursive: true });
  await cp(path.join(SYSTEMD, 'sysusers.d/postwerk.conf'), path.join(root, 'etc/sysusers.d/postwerk.conf'));
  const made = await run('systemd-sysusers', [`--root=${root}`]);
  t.is(made.code, 0, made.stderr);
  const user = (await readFile(path.join(root, 'etc/passwd'), 'utf8'))
    .split('\n')
    .find((l) => l.startsWith('postwerk:'));
  const [, , uid, gid, , home, shell] = user!.split(':');
  t.true(Number(uid) < 1000, `a system user (uid ${uid})`);
  t.is(home, '/var/lib/postwerk');
  t.regex(shell, /nologin$/);
  const group = (await readFile(path.join(root, 'etc/group'), 'utf8'))
    .split('\n')
    .find((l) => l.startsWith('postwerk:'));
  t.is(group!.split(':')[2], gid);
});
