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
  server: { proxy: { '^/(?!src/|@|node_modules/|assets/).+': 'http://127.0.0.1:3000' } },
});
