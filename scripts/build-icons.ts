/**
 * Renders the app icons drawn in public/icons/*.svg to the PNG sizes the web app manifest lists
 * (Debian's headless Chromium draws them; run `npx tsx scripts/build-icons.ts` after editing an SVG).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const dir = path.resolve(import.meta.dirname, '..', 'public', 'icons');
const OUT: Array<{ svg: string; png: string; size: number }> = [
  { svg: 'icon.svg', png: 'icon-192.png', size: 192 },
  { svg: 'icon.svg', png: 'icon-512.png', size: 512 },
  { svg: 'icon-maskable.svg', png: 'icon-maskable-512.png', size: 512 },
  { svg: 'icon.svg', png: 'apple-touch-icon-180.png', size: 180 },
];

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
try {
  for (const { svg, png, size } of OUT) {
    const page = await browser.newPage({ viewport: { width: size, height: size } });
    const markup = readFileSync(path.join(dir, svg), 'utf8').replace('<svg ', `<svg width="${size}" height="${size}" `);
    await page.setContent(`<html><body style="margin:0;background:transparent">${markup}</body></html>`);
    await page.screenshot({
      path: path.join(dir, png),
      omitBackground: true,
      clip: { x: 0, y: 0, width: size, height: size },
    });
    await page.close();
    process.stdout.write(`${png} (${size}x${size})\n`);
  }
} finally {
  await browser.close();
}
