// The dashboard's build: web/ → dist/web (index.html and content-hashed files under assets/), served by the api.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    // No data: URLs for assets and no inline module preload polyfill: the CSP allows scripts from 'self' only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  // `npm run web:dev`: pages from Vite (a browser navigation asks for HTML), everything else from the api.
  server: {
    proxy: {
      '^/(?!src/|@|node_modules/).+': {
        target: 'http://127.0.0.1:3000',
        bypass: (req) => (req.headers.accept?.includes('text/html') ? '/index.html' : undefined),
      },
    },
  },
});
