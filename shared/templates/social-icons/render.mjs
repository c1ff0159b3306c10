// Draws the social block's default icons from the SVGs beside this file: white on a transparent ground, 48 px for the
// 24 px the block shows (sharp on dense screens), the glyph at 60 % of the square as MJML's own icons have it. MJML
// puts each on its network's colour. Run it after changing an SVG: `node shared/templates/social-icons/render.mjs`
// (Debian's Chromium, as the browser tests use; CHROMIUM_PATH overrides).
import { readdirSync, readFileSync } from 'node:fs';
import process from 'node:process';
import path from 'node:path';
import { chromium } from 'playwright-core';

const dir = import.meta.dirname;
const SIZE = 48;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
try {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE } });
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.svg'))) {
    const svg = readFileSync(path.join(dir, file), 'utf8');
    await page.setContent(
      `<style>html,body{margin:0;background:transparent}div{width:${SIZE}px;height:${SIZE}px;display:flex;` +
        `align-items:center;justify-content:center}svg{width:60%;height:60%;fill:#fff;color:#fff}</style><div>${svg}</div>`,
    );
    await page
      .locator('div')
      .screenshot({ path: path.join(dir, file.replace(/\.svg$/, '.png')), omitBackground: true });
  }
} finally {
  await browser.close();
}
