// A dashboard build moved into place while the api serves (web/build.js renames the old build aside, then the new one
// in): a request that comes between the two renames finds no build for a moment and waits for it, rather than
// failing (a CI run's browser test once met a 500 there, its page never drawn).
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import Koa from 'koa';
import { dashboard } from '../api/dashboard/serve.ts';

test('a request while the build is missing is answered once it is in place', async (t) => {
  const dir = path.join(await mkdtemp(path.join(tmpdir(), 'pw-web-swap-')), 'web');
  const app = new Koa();
  app.use(dashboard(dir));
  const server = app.listen(0, '127.0.0.1');
  t.teardown(() => server.close());
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  const answer = fetch(`http://127.0.0.1:${port}/sign-in`, { headers: { accept: 'text/html' } });
  // The build arrives 300 ms after the request (the second rename of a build on a busy machine).
  await new Promise((resolve) => setTimeout(resolve, 300));
  await mkdir(path.join(dir, 'assets'), { recursive: true });
  await writeFile(path.join(dir, 'assets', 'app-abc123.js'), 'console.log(1)');
  await writeFile(path.join(dir, 'index.html'), '<div id="root"></div><script src="/assets/app-abc123.js"></script>');
  const res = await answer;
  t.is(res.status, 200);
  t.regex(await res.text(), /<div id="root"><\/div>/);
  const asset = await fetch(`http://127.0.0.1:${port}/assets/app-abc123.js`);
  t.is(asset.status, 200);
  t.is(await asset.text(), 'console.log(1)');
});
