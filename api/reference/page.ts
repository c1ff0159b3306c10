// The API reference a person reads: Swagger UI over the OpenAPI document this api serves, at `/docs` (and
// `/api/v1/docs`, beside `/api/v1/openapi.json`). Every file the page loads is ours or swagger-ui-dist's, served
// from node_modules by this process: the page works with no network, and its CSP lets it reach nothing else.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Context, Next } from 'koa';
import { assetPath } from '../../shared/layout.ts';
import { BASE_PATHS } from '../router.ts';

const swaggerUi = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** `docs/assets/<name>`: what the page loads, by name; nothing else is served from these folders. */
const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui-bundle.js': { file: path.join(swaggerUi, 'swagger-ui-bundle.js'), type: 'text/javascript' },
  'swagger-ui.css': { file: path.join(swaggerUi, 'swagger-ui.css'), type: 'text/css' },
  'favicon.png': { file: path.join(swaggerUi, 'favicon-32x32.png'), type: 'image/png' },
  // Ours, from the sources in both layouts (the build copies no file that is not TypeScript).
  'start.js': { file: assetPath('api/reference/start.js'), type: 'text/javascript' },
  'reference.css': { file: assetPath('api/reference/reference.css'), type: 'text/css' },
};

// Relative URLs, so the same page works at /docs and /api/v1/docs, and behind a proxy that adds a path prefix.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Postwerk API reference</title>
<link rel="icon" type="image/png" href="docs/assets/favicon.png">
<link rel="stylesheet" href="docs/assets/swagger-ui.css">
<link rel="stylesheet" href="docs/assets/reference.css">
</head>
<body>
<main id="reference" data-document="openapi.json"></main>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script src="docs/assets/start.js"></script>
</body>
</html>
`;

interface Loaded {
  body: Buffer;
  gzipped: Buffer;
  etag: string;
  type: string;
}

// Read (and compressed) on first use, not at start: most api processes never serve the page.
const loaded = new Map<string, Promise<Loaded>>();

function load(name: string): Promise<Loaded> {
  let entry = loaded.get(name);
  if (!entry) {
    const { file, type } = ASSETS[name];
    entry = readFile(file).then((body) => ({
      body,
      gzipped: gzipSync(body),
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      type,
    }));
    entry.catch(() => loaded.delete(name));
    loaded.set(name, entry);
  }
  return entry;
}

/**
 * The page's policy: scripts, styles, images and fonts from here only, and requests (the document; "Try it
 * out") to here or to PUBLIC_BASE_URL, which the document names as its server. Swagger UI sets `style`
 * attributes, hence 'unsafe-inline' for styles only.
 */
function policy(publicBaseUrl: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self' ${new URL(publicBaseUrl).origin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function apiReference(publicBaseUrl: string) {
  const csp = policy(publicBaseUrl);
  const pages = new Set(BASE_PATHS.map((base) => `${base}/docs`));
  const assetPath = new RegExp(`^(?:${BASE_PATHS.map((b) => b.replace(/\//g, '\\/')).join('|')})/docs/assets/([^/]+)$`);
  return async function reference(ctx: Context, next: Next) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (pages.has(ctx.path)) {
      ctx.set('Content-Security-Policy', csp);
      ctx.set('Referrer-Policy', 'no-referrer');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = PAGE;
      return;
    }
    // The page's relative URLs resolve against /docs, not /docs/.
    if (pages.has(ctx.path.replace(/\/$/, ''))) return ctx.redirect('../docs');
    const name = assetPath.exec(ctx.path)?.[1];
    if (!name || !Object.hasOwn(ASSETS, name)) return next();
    const asset = await load(name);
    const gzip = ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
    // Revalidated on each load (the files change with an upgrade), answered 304 while unchanged. Each encoding
    // is its own representation, with its own tag.
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', gzip ? asset.etag.replace(/"$/, '-gz"') : asset.etag);
    ctx.vary('Accept-Encoding');
    ctx.status = 200; // ctx.fresh compares only for a 2xx answer
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    if (gzip) ctx.set('Content-Encoding', 'gzip');
    ctx.body = gzip ? asset.gzipped : asset.body;
  };
}
