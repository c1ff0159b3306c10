// The dashboard (web/, built by `npm run build` into dist/web): its page at `/` and at each of its page URLs (the
// single-page app routes them in the browser), and its content-hashed files under /assets/, cached for a year. The
// page's CSP lets it load and reach nothing but this origin: no inline script, no third-party origin.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Context, Next } from 'koa';
import { root } from '../../shared/layout.ts';

/** In every layout (the sources, dist/, the tests' dist-test/): the build of `npm run build` in dist/web. */
const BUILT = path.join(root, 'dist', 'web');
const isBuild = (dir: string) => existsSync(path.join(dir, 'index.html')) && existsSync(path.join(dir, 'assets'));
let found: string | undefined;
/** Looked for on each request until found (a build made after the api started is served). */
function webBuild(given: string | undefined): string | undefined {
  if (given !== undefined) return isBuild(given) ? given : undefined;
  found ??= isBuild(BUILT) ? BUILT : undefined;
  return found;
}

/** A build being moved into place (web/build.js: two renames) is missing for a moment: looked for up to ~2 s. */
const TRIES = 20;
const pause = () => new Promise((resolve) => setTimeout(resolve, 100));

async function builtDir(given: string | undefined): Promise<string | undefined> {
  for (let attempt = 1; ; attempt++) {
    const dir = webBuild(given);
    if (dir || attempt >= TRIES) return dir;
    await pause();
  }
}

/** The page URLs (each page's own address); API routes never start so (the consent page's calls add a segment). */
const PAGES =
  /^\/(?:|sign-in|sign-up|verify|reset-password|dashboard(?:\/[A-Za-z0-9._~%-]+)*|oauth\/consent\/[A-Za-z0-9_-]+)\/?$/;
const ASSET = /^\/assets\/([A-Za-z0-9._-]+)$/;

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const CONSENT_CSP = DASHBOARD_CSP.replace("img-src 'self' data:", "img-src 'self' data: https:");

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

interface Loaded {
  body: Buffer;
  gzipped: Buffer;
  type: string;
}

let files: Promise<Map<string, Loaded>> | undefined;

async function readBuild(dir: string): Promise<Map<string, Loaded>> {
  const out = new Map<string, Loaded>();
  const index = await readFile(path.join(dir, 'index.html'));
  out.set('index.html', { body: index, gzipped: gzipSync(index), type: 'text/html; charset=utf-8' });
  for (const name of await readdir(path.join(dir, 'assets'))) {
    const body = await readFile(path.join(dir, 'assets', name));
    const type = TYPES[path.extname(name)] ?? 'application/octet-stream';
    out.set(`assets/${name}`, { body, gzipped: gzipSync(body), type });
  }
  return out;
}

/** Every file of the build, read and compressed once (a few hundred kilobytes); read again while it is mid-move. */
function loadBuild(dir: string): Promise<Map<string, Loaded>> {
  files ??= (async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await readBuild(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= TRIES) throw err;
        await pause();
      }
    }
  })();
  files.catch(() => (files = undefined));
  return files;
}

function send(ctx: Context, file: Loaded) {
  const gzip = ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
  ctx.vary('Accept-Encoding');
  ctx.type = file.type;
  if (gzip) ctx.set('Content-Encoding', 'gzip');
  ctx.body = gzip ? file.gzipped : file.body;
}

export function dashboard(given?: string) {
  return async function serveDashboard(ctx: Context, next: Next) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const asset = ASSET.exec(ctx.path)?.[1];
    if (!PAGES.test(ctx.path) && !asset) return next();
    // A request with an API key is an API client, not a browser: `/` answers it as the API does (404 JSON).
    if (/^bearer\s/i.test(ctx.get('authorization'))) return next();
    const dir = await builtDir(given);
    if (!dir) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The dashboard is not built: run `npm run build` (npm start does).\n';
      return;
    }
    const build = await loadBuild(dir);
    if (asset) {
      const file = build.get(`assets/${asset}`);
      if (!file) return next();
      // Content-hashed names: a file never changes under its name.
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      return send(ctx, file);
    }
    // The consent page shows the client's registered logo (an https URL of its own).
    ctx.set('Content-Security-Policy', ctx.path.startsWith('/oauth/consent/') ? CONSENT_CSP : DASHBOARD_CSP);
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('X-Frame-Options', 'DENY');
    send(ctx, build.get('index.html')!);
  };
}
