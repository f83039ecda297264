/**
 * Multi-turn runs in the app, without an engine: a run file whose samples carry episodes
 * (hand-built from SkyRL's own episodes, tests/helpers/episode-records.ts) is imported through the
 * Runs page; the dashboard's Turns panel must show episodeStats of the same records, each
 * trajectory view the records' turns (observation text exactly), the Generate screen's preset
 * picker the preset's sampling and fingerprint. Screenshots at 1400×1000 and 390×844, each
 * checked with axe, go to test-artifacts/.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { episodeStats } from '../../src/core/episode/stats.ts';
import { SKYRL_SQL_PRESET, presetFingerprint } from '../../src/core/prompt/presets.ts';
import { runFileJson } from '../../src/core/runfile/export.ts';
import { episodeRunFile } from '../helpers/episode-records.ts';
import { seriousViolations } from './axe-check.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, dismissOfflineNote, importDemoLibrary, screenshot, useApp } from './workbench-helpers.ts';

const file = episodeRunFile();
const stats = episodeStats(file.samples);

describe.skipIf(browserSkipReason())(suiteTitle('multi-turn runs: Turns panel, trajectory view, preset picker'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { hash: '#/runs' });

  /** Both sizes of the screen shown now, each checked with axe; on a phone the page never scrolls sideways. */
  async function screens(name: string): Promise<void> {
    await dismissOfflineNote(page);
    await screenshot(page, `multi-turn-${name}-1400x1000.png`, true);
    const wide = await seriousViolations(page);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, `multi-turn-${name}-390x844.png`, true);
    const phone = await seriousViolations(page);
    const phoneWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    await page.setViewportSize({ width: 1400, height: 1000 });
    expect({ screen: name, wide, phone, phoneWidth }).toEqual({ screen: name, wide: [], phone: [], phoneWidth: 390 });
  }

  beforeAll(async () => {
    await page.setViewportSize({ width: 1400, height: 1000 });
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-multiturn-'));
    const at = path.join(dir, 'episodes.run.json');
    writeFileSync(at, runFileJson(file));
    await page.getByTestId('import-run').setInputFiles(at);
    await page
      .getByTestId('import-run-message')
      .filter({ hasText: `Imported run "${file.run.name}"` })
      .waitFor({ timeout: 60_000 });
  });

  it("shows the Turns panel with episodeStats' numbers of the same records, each count opening exactly its items", async () => {
    await page.goto(`${server.url}#/run/${file.run.id}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
    const panel = page.getByTestId('turns-panel');
    const count = async (key: string) => (await panel.locator(`[data-count="${key}"]`).textContent())?.trim();
    expect(await count('episodes')).toBe(String(stats.episodes));
    expect(await count('turns-mean')).toBe(stats.turnsMean!.toFixed(2));
    expect(await count('probes')).toBe(String(stats.probes));
    expect(await count('probes-failed')).toBe(String(stats.probesFailed));
    expect(await count('probe-failed')).toBe(String(stats.episodesWithFailedProbe));
    expect(await count('changed-answer')).toBe(String(stats.probeChangedAnswer));
    expect(await count('final-was-probed')).toBe(String(stats.finalWasProbed));
    expect(await count('turn-limit')).toBe(String(stats.cutByTurnLimit));
    expect(await count('solution')).toBe(String(stats.endedBySolution));
    expect(await count('format-failure')).toBe(String(stats.formatFailures));
    expect(await count('preset-reward')).toBe(stats.presetRewardMean!.toFixed(3));
    const rows = await panel.locator('[data-testid="turns-table"] tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        turns: Number(tr.getAttribute('data-turns')),
        count: Number(tr.querySelector('[data-cell="count"]')!.textContent),
        scored: Number(tr.querySelector('[data-cell="scored"]')!.textContent),
        ex: tr.querySelector('[data-cell="ex"]')!.textContent!.trim(),
      })),
    );
    expect(rows).toEqual(
      stats.byTurns.map((r) => ({ turns: r.turns, count: r.count, scored: r.scored, ex: r.exPct!.toFixed(2) })),
    );
    expect(await panel.getByTestId('turns-preset').textContent()).toContain(presetFingerprint(SKYRL_SQL_PRESET));
    await screens('turns-panel');

    await panel.getByTestId('turn-limit').click();
    await page.locator('[data-testid="explorer"][data-complete="true"]').waitFor();
    const cut = file.samples.filter((s) => s.episode?.endReason === 'turn-limit');
    await expect
      .poll(async () => (await page.getByTestId('filter-count').textContent())?.trim())
      .toMatch(new RegExp(`^${cut.length} of ${file.samples.length} items`));
  });

  it("shows every turn of every sample, each observation exactly the record's", async () => {
    for (const s of file.samples) {
      await page.goto(`${server.url}#/run/${file.run.id}/items/${s.index}.${s.sample}`);
      const view = page.locator(`[data-testid="item-detail"][data-index="${s.index}"] [data-testid="trajectory"]`);
      await view.waitFor();
      const ep = s.episode!;
      const turns = view.getByTestId('turn');
      expect(await turns.count()).toBe(ep.turns.length);
      expect(await view.getByTestId('trajectory-reward').textContent()).toBe(String(ep.presetReward));
      expect(await view.getByTestId('trajectory-ex').textContent()).toBe(String(s.ex));
      for (const [k, t] of ep.turns.entries()) {
        const turn = turns.nth(k);
        expect(await turn.getByTestId('turn-text').textContent(), `${s.index} turn ${k + 1} text`).toBe(t.text);
        if (t.observation === null) expect(await turn.getByTestId('turn-last').count()).toBe(1);
        else expect(await turn.getByTestId('turn-observation').textContent(), `turn ${k + 1}`).toBe(t.observation);
        if (t.probe?.timedOut) expect(await turn.getByTestId('turn-probe-badge').textContent()).toBe('timeout');
        else if (t.probe?.error !== undefined)
          expect(await turn.getByTestId('turn-probe-badge').textContent()).toBe('error');
        else if (t.probe)
          expect(await turn.getByTestId('turn-probe-rows').getAttribute('data-row-count')).toBe(
            String(t.probe.rows.length),
          );
      }
    }
    // The screenshot: the first episode (probes with rows, an error, then the answer), its observations open.
    await page.goto(`${server.url}#/run/${file.run.id}/items/0.0`);
    const view = page.locator('[data-testid="item-detail"][data-index="0"] [data-testid="trajectory"]');
    await view.waitFor();
    for (const d of await view.locator('details').all()) await d.evaluate((el) => el.setAttribute('open', ''));
    await view.scrollIntoViewIfNeeded();
    await screens('trajectory');
  });

  it("sets the sampling from the chosen preset and shows its fingerprint, content and the first question's chat", async () => {
    await importDemoLibrary(page);
    await page.getByTestId('nav-generate').click();
    await page.locator(`[data-preset="${SKYRL_SQL_PRESET.id}"] input`).check();
    const chosen = page.getByTestId('preset-chosen');
    expect(await chosen.getAttribute('data-preset')).toBe(SKYRL_SQL_PRESET.id);
    expect(await chosen.getByTestId('preset-fingerprint').textContent()).toBe(presetFingerprint(SKYRL_SQL_PRESET));
    expect(await page.getByTestId('gen-n').inputValue()).toBe(String(SKYRL_SQL_PRESET.sampling.n));
    expect(await page.getByTestId('gen-temperature').inputValue()).toBe(String(SKYRL_SQL_PRESET.sampling.temperature));
    expect(await page.getByTestId('gen-max-tokens').inputValue()).toBe(String(SKYRL_SQL_PRESET.sampling.maxTokens));
    const messages = chosen.getByTestId('preset-sample-message');
    expect(await messages.count()).toBe(SKYRL_SQL_PRESET.messages.length);
    expect(await messages.nth(0).textContent()).toBe(SKYRL_SQL_PRESET.messages[0]!.content);
    expect(await chosen.getByTestId('preset-sources').textContent()).toContain('skyrl-gym/skyrl_gym/envs/sql/env.py');
    await chosen.getByTestId('preset-content').evaluate((el) => el.setAttribute('open', ''));
    await chosen.scrollIntoViewIfNeeded();
    await screens('preset-picker');
  });
});
