/**
 * A multi-turn run under the skyrl-sql-v1 preset from the Generate screen of the built app
 * (headless Chromium), with REAL inference: stories260K.gguf on the CPU engine (wllama). BIRD
 * mini-dev is imported through the folder input (its dev_tables.json, beside the questions, is
 * stored with it: the preset renders OmniSQL's schema from it), the first 5 questions are asked
 * with 16 tokens per turn. wllama cannot continue a final assistant message, so the episodes are
 * played as conversations. The model writes stories, never `<sql>` or `<solution>`: every turn is
 * an invalid action, every episode must still end (at the turn limit) and count as a format
 * failure. The Turns panel must show episodeStats of the stored samples, each trajectory view the
 * stored turns. Screenshots of both at 1400×1000 and 390×844 go to test-artifacts/.
 */
import { describe, expect, it } from 'vitest';
import { episodeStats } from '../../src/core/episode/stats.ts';
import { SKYRL_SQL_PRESET, presetFingerprint } from '../../src/core/prompt/presets.ts';
import type { SampleRecord } from '../../src/core/run/types.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, dismissOfflineNote, importBirdMiniDev, screenshot, useApp } from './workbench-helpers.ts';

describe.skipIf(browserSkipReason())(
  suiteTitle('a multi-turn preset run with the real GGUF model on the CPU engine'),
  () => {
    let { server, page } = {} as AppSession;
    useApp((s) => ({ server, page } = s));

    async function both(name: string): Promise<void> {
      await dismissOfflineNote(page);
      await page.setViewportSize({ width: 1400, height: 1000 });
      await screenshot(page, `preset-run-${name}-1400x1000.png`, true);
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, `preset-run-${name}-390x844.png`, true);
      const phoneWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      await page.setViewportSize({ width: 1400, height: 1000 });
      expect({ name, phoneWidth }).toEqual({ name, phoneWidth: 390 });
    }

    /** The run's samples as IndexedDB holds them. */
    async function storedSamples(runId: string): Promise<SampleRecord[]> {
      return page.evaluate(async (id) => {
        const db = await new Promise<IDBDatabase>((resolve, reject) => {
          const r = indexedDB.open('rlvr-workbench');
          r.onsuccess = () => resolve(r.result);
          r.onerror = () => reject(r.error);
        });
        const blocks = await new Promise<Array<{ runId: string; samples: SampleRecord[] }>>((resolve, reject) => {
          const r = db.transaction('sampleBlocks').objectStore('sampleBlocks').getAll();
          r.onsuccess = () => resolve(r.result);
          r.onerror = () => reject(r.error);
        });
        db.close();
        return blocks
          .filter((b) => b.runId === id)
          .flatMap((b) => b.samples)
          .sort((a, b) => a.index - b.index || a.sample - b.sample);
      }, runId);
    }

    it('5 questions: every episode ends and is counted (the prompt overflows the model context: an engine error on turn 1), the Turns panel and each trajectory show what was stored', async () => {
      await page.setViewportSize({ width: 1400, height: 1000 });
      await page.goto(server.url + '#/datasets');
      await importBirdMiniDev(page);

      await page.getByTestId('nav-generate').click();
      await page.getByTestId('generate-page').waitFor();
      await page.getByTestId('gguf-file').setInputFiles(sharedData('models', 'stories260K.gguf'));
      await page.getByTestId('engine-load').click();
      await expect
        .poll(async () => (await page.getByTestId('engine-loaded').textContent()) ?? '', { timeout: 60_000 })
        .toContain('wllama · stories260K.gguf');
      await page.locator(`[data-preset="${SKYRL_SQL_PRESET.id}"] input`).check();
      await page.getByTestId('gen-subset').selectOption('first');
      await page.getByTestId('gen-first-n').fill('5');
      await page.getByTestId('gen-max-tokens').fill('16');
      await page.getByTestId('gen-name').fill('stories · skyrl-sql-v1');
      await page.getByTestId('gen-start').click();
      await page.waitForURL(/#\/run\/[^/]+$/, { timeout: 300_000 });
      const runId = decodeURIComponent(page.url().split('#/run/')[1]!);

      const samples = await storedSamples(runId);
      expect(samples).toHaveLength(5);
      for (const s of samples) {
        const e = s.episode!;
        expect(s.generation).toMatchObject({ templateId: 'skyrl-sql-v1', engine: 'wllama', model: 'stories260K.gguf' });
        // The first turn's chat is the preset's: SkyRL's system text, then OmniSQL's schema of the question's database.
        expect(s.generation!.prompt.map((m) => m.role)).toEqual(['system', 'user']);
        expect(s.generation!.prompt[0]!.content).toBe(SKYRL_SQL_PRESET.messages[0]!.content);
        expect(s.generation!.prompt[1]!.content).toContain('CREATE TABLE');
        // SkyRL's prompt is longer than stories260K's 2048-token context (its system text alone is
        // 2,742 characters, about 2,150 of this model's tokens): llama.cpp refuses the first turn,
        // and the episode ends there on the engine's error, counted, its SQL none, scored 0.
        expect(e.endReason).toBe('engine-error');
        expect(e.error).toMatch(/request \(\d+ tokens\) exceeds the available context size \(2048 tokens\)/);
        expect(s.generation!.error).toBe(e.error);
        expect([e.finalSql, s.sql, s.ex]).toEqual([null, '', 0]);
      }
      const stats = episodeStats(samples);
      expect([stats.episodes, stats.engineErrors, stats.noFinalSql]).toEqual([5, 5, 5]);

      // The Turns panel: episodeStats of the stored samples.
      await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
      const panel = page.getByTestId('turns-panel');
      const count = async (key: string) => (await panel.locator(`[data-count="${key}"]`).textContent())?.trim();
      expect(await count('episodes')).toBe('5');
      expect(await count('turns-mean')).toBe(stats.turnsMean!.toFixed(2));
      expect(await count('engine-errors')).toBe('5');
      expect(await count('no-final-sql')).toBe('5');
      expect(await count('turn-limit')).toBe(String(stats.cutByTurnLimit));
      expect(await count('format-failure')).toBe(String(stats.formatFailures));
      expect(await count('probes')).toBe(String(stats.probes));
      expect(await panel.getByTestId('turns-preset').textContent()).toContain(presetFingerprint(SKYRL_SQL_PRESET));
      await panel.scrollIntoViewIfNeeded();
      await both('turns-panel');

      // Each trajectory: every stored turn, its text and the observation sent back, exactly.
      for (const s of samples) {
        await page.goto(`${server.url}#/run/${encodeURIComponent(runId)}/items/${s.index}.${s.sample}`);
        const view = page.locator(`[data-testid="item-detail"][data-index="${s.index}"] [data-testid="trajectory"]`);
        await view.waitFor();
        const turns = view.getByTestId('turn');
        expect(await turns.count()).toBe(s.episode!.turns.length);
        for (const [k, t] of s.episode!.turns.entries()) {
          expect(await turns.nth(k).getByTestId('turn-text').textContent(), `${s.index} turn ${k + 1}`).toBe(t.text);
          if (t.observation !== null)
            expect(await turns.nth(k).getByTestId('turn-observation').textContent()).toBe(t.observation);
        }
      }
      const first = samples[0]!;
      await page.goto(`${server.url}#/run/${encodeURIComponent(runId)}/items/${first.index}.0`);
      const view = page.locator(`[data-testid="item-detail"][data-index="${first.index}"] [data-testid="trajectory"]`);
      await view.waitFor();
      for (const d of await view.locator('details').all()) await d.evaluate((el) => el.setAttribute('open', ''));
      await view.scrollIntoViewIfNeeded();
      await both('trajectory');
    }, 600_000);
  },
);
