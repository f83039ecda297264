import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'vitest';
import { writeVerlDumps } from '../helpers/series-dumps.ts';
import { importBirdMiniDev, openApp, screenshot } from './workbench-helpers.ts';

describe('debug', () => {
  it('runs', async () => {
    const { server, browser, page, watch } = await openApp({
      viewport: { width: 1400, height: 1000 },
      acceptDownloads: true,
    });
    const t0 = Date.now();
    const log = (m: string) => console.log(`[${Math.round((Date.now() - t0) / 1000)}s] ${m}`);
    page.on('console', (m) => log(`console ${m.type()}: ${m.text()}`));
    try {
      await page.goto(server.url + '#/datasets');
      await importBirdMiniDev(page);
      log('imported');
      const dir = mkdtempSync(path.join(tmpdir(), 'dbg-'));
      writeVerlDumps(path.join(dir, 'val'), [0, 1, 2], ['superhero']);
      await page.getByTestId('nav-series').click();
      await page.getByTestId('series-folder').setInputFiles(path.join(dir, 'val'));
      await page.waitForTimeout(1000);
      await screenshot(page, 'dbg-1.png', true);
      log(`blocker: ${await page.getByTestId('series-blocker').textContent()}`);
      await page.getByTestId('series-start').click();
      for (let i = 0; i < 12; i++) {
        await page.waitForTimeout(10_000);
        log(`url ${page.url()} problems ${watch.problems.join(' | ')}`);
        await screenshot(page, `dbg-${i + 2}.png`, true);
        if (page.url().includes('#/series/')) break;
      }
      await page.waitForTimeout(15_000);
      await screenshot(page, 'dbg-end.png', true);
    } finally {
      await browser.close();
      await server.close();
    }
  }, 900_000);
});
