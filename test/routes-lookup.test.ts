// The api's routes middleware (api/router.ts routesMiddleware) looks a request's routes up by its path's first
// segment; the whole router tries every route. Both must answer every request alike.
import test from 'ava';
import Koa from 'koa';
import { operations } from '../api/routes/index.ts';
import { BASE_PATHS, buildRouter, routesMiddleware } from '../api/router.ts';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { serve } from './helpers/http.ts';

let p: Platform;

test.before(async () => {
  p = await startPlatform();
});

test.after.always(async () => {
  await p?.close();
});

test('routes looked up by first segment answer every request as the whole router does', async (t) => {
  // The same routes served both ways: the whole router (every route tried, then its 405/501/OPTIONS answers) and
  // the api's middleware (only the routes of the path's first segment). Every declared route at both bases, in
  // other cases and with a trailing slash, with its own method where that reads nothing (GET; the handlers run for
  // real, refusing a missing key), with a method it lacks, OPTIONS and an unknown method; and paths nobody serves.
  const router = buildRouter(operations, p.deps);
  const app = (...middleware: Koa.Middleware[]) => {
    const a = new Koa();
    a.silent = true;
    for (const m of middleware) a.use(m);
    return serve(a);
  };
  const both = await Promise.all([
    app(router.routes() as unknown as Koa.Middleware, router.allowedMethods() as Koa.Middleware),
    app(routesMiddleware(router)),
  ]);
  t.teardown(() => Promise.all(both.map((b) => b.close())));
  const [whole, shelved] = both.map((b) => b.url);
  const cases: [string, string][] = [
    ['GET', '/'],
    ['GET', '/nope'],
    ['PROPFIND', '/nope'],
    ['GET', '/api/v1'],
    ['GET', '/api/v1/'],
    ['GET', '/api/v2/emails'],
    ['GET', '/api'],
    ['GET', '//emails'],
  ];
  for (const op of operations) {
    const path = op.path.replace(/\{[A-Za-z0-9_]+\}/g, 'x1');
    const other = op.method === 'patch' ? 'PUT' : 'PATCH';
    for (const base of BASE_PATHS)
      for (const variant of [path, path.toUpperCase(), `${path}/`]) {
        const url = base + variant;
        if (op.method === 'get') cases.push(['GET', url]);
        cases.push([other, url], ['OPTIONS', url], ['PROPFIND', url]);
      }
  }
  const answer = async (base: string, method: string, url: string) => {
    const res = await fetch(base + url, { method, headers: { 'user-agent': 'routes-test' } });
    // /ready times its checks: the only part of an answer that differs from one request to the next.
    const body = (await res.text()).replace(/"durationMs":\d+/g, '"durationMs":0');
    return { status: res.status, allow: res.headers.get('allow'), body };
  };
  for (const [method, url] of cases)
    t.deepEqual(await answer(shelved, method, url), await answer(whole, method, url), `${method} ${url}`);
  t.true(cases.length > 2000);
});
