/**
 * A multi-turn run under the skyrl-sql-v1 preset from the Generate screen of the built app
 * (headless Chromium), with REAL inference: stories260K.gguf on the CPU engine (wllama). BIRD
 * mini-dev is imported through the folder input (its dev_tables.json, beside the questions, is
 * stored with it: the preset renders OmniSQL's schema from it), the first 5 questions are asked
 * with 16 tokens per turn. SkyRL's prompt (about 5,800 of this model's tokens) does not fit the
 * model's 2048-token training context: the run is refused before it starts, saying what to set;
 * with the Generate screen's context set to 8192 (beyond the training context, with a warning)
 * the run plays. wllama cannot continue a final assistant message, so the episodes are played as
 * conversations. The model writes stories, never `<sql>` or `<solution>`: every turn is an invalid
 * action, every episode runs to the preset's turn limit (5) and counts as a format failure. The
 * Turns panel must show episodeStats of the stored samples, each trajectory view all its turns.
 * Screenshots of the preset picker, the Turns panel and a trajectory at 1400×1000 and 390×844 go
 * to test-artifacts/.
 */
import { describe, expect, it } from 'vitest';
import { episodeStats } from '../../src/core/episode/stats.ts';
import { SKYRL_SQL_PRESET, presetFingerprint } from '../../src/core/prompt/presets.ts';
import { observationText, type SkyrlSqlEnv } from '../../src/core/episode/skyrl-sql.ts';
import { presetEnv } from '../../src/core/run/preset-generation.ts';
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

    it("5 questions under skyrl-sql-v1: refused on the model's 2048-token context with what to set, then, with the context set to 8192, every episode plays its 5 invalid turns to the limit, counted as a format failure; the Turns panel and each trajectory show what was stored", async () => {
      await page.setViewportSize({ width: 1400, height: 1000 });
      await page.goto(server.url + '#/datasets');
      await importBirdMiniDev(page);

      await page.getByTestId('nav-generate').click();
      await page.getByTestId('generate-page').waitFor();
      await page.getByTestId('gguf-file').setInputFiles(sharedData('models', 'stories260K.gguf'));
      await page.getByTestId('engine-load').click();
      await expect
        .poll(async () => (await page.getByTestId('engine-loaded').textContent()) ?? '', { timeout: 60_000 })
        .toContain('wllama · stories260K.gguf · context 2048 tokens');
      await page.locator(`[data-preset="${SKYRL_SQL_PRESET.id}"] input`).check();
      await page.getByTestId('preset-chosen').scrollIntoViewIfNeeded();
      await both('preset-picker');
      await page.getByTestId('gen-subset').selectOption('first');
      await page.getByTestId('gen-first-n').fill('5');
      await page.getByTestId('gen-max-tokens').fill('16');
      await page.getByTestId('gen-name').fill('stories · skyrl-sql-v1');
      const runsBefore = await page.evaluate(() => location.hash);

      // The default context (the model's training context, 2048) cannot hold SkyRL's prompt (its
      // system text alone is about 2,150 of this model's tokens): refused before any run is stored.
      await page.getByTestId('gen-start').click();
      const refusal = page.getByTestId('gen-error');
      await refusal.waitFor({ timeout: 120_000 });
      expect(await refusal.textContent()).toMatch(
        /preset skyrl-sql-v1 does not fit the loaded model's context: the first prompt \(question \d+\) is \d+ tokens and its 5 turns of up to 16 tokens each \(observations come on top\) bring a request to \d+ tokens, more than the context of 2048 tokens: set "Context \(tokens\)" on the Generate screen to at least \d+ and load the model again/,
      );
      expect(await page.evaluate(() => location.hash)).toBe(runsBefore);

      // The context set on the Generate screen, beyond the training context: allowed, with a warning.
      await page.getByTestId('gguf-context').fill('8192');
      await page.getByTestId('engine-load').click();
      await expect
        .poll(async () => (await page.getByTestId('engine-loaded').textContent()) ?? '', { timeout: 60_000 })
        .toContain('wllama · stories260K.gguf · context 8192 tokens');
      expect(await page.getByTestId('engine-context-warning').textContent()).toContain(
        "the context (8192 tokens) is beyond the model's training context (2048 tokens): llama.cpp allows it, but the model's quality may drop past token 2048",
      );
      // The refusal (still shown) and the warning, on the Generate screen.
      await page.getByTestId('engine-context-warning').scrollIntoViewIfNeeded();
      await both('context');
      await page.getByTestId('gen-start').click();
      await page.waitForURL(/#\/run\/[^/]+$/, { timeout: 480_000 });
      const runId = decodeURIComponent(page.url().split('#/run/')[1]!);

      const samples = await storedSamples(runId);
      expect(samples).toHaveLength(5);
      const env = presetEnv(SKYRL_SQL_PRESET, true) as SkyrlSqlEnv;
      const limit = SKYRL_SQL_PRESET.multiTurn!.maxTurns;
      expect(limit).toBe(5);
      for (const s of samples) {
        const e = s.episode!;
        expect(s.generation).toMatchObject({ templateId: 'skyrl-sql-v1', engine: 'wllama', model: 'stories260K.gguf' });
        // The first turn's chat is the preset's: SkyRL's system text, then OmniSQL's schema of the question's database.
        expect(s.generation!.prompt.map((m) => m.role)).toEqual(['system', 'user']);
        expect(s.generation!.prompt[0]!.content).toBe(SKYRL_SQL_PRESET.messages[0]!.content);
        expect(s.generation!.prompt[1]!.content).toContain('CREATE TABLE');
        expect(s.generation!.tokensIn).toBeGreaterThan(2048);
        // The model writes stories: every turn an invalid action (no probe), answered with SkyRL's
        // invalid-action observation and the turns left, up to the limit, where the episode ends
        // without a solution: a format failure, no SQL, scored 0.
        expect(e.turns).toHaveLength(limit);
        expect(e.turnsUsed).toBe(limit);
        for (const [k, t] of e.turns.entries()) {
          expect(t.probeSql, `${s.index} turn ${k + 1}`).toBeNull();
          expect(t.probe).toBeNull();
          expect(t.text.length).toBeGreaterThan(0);
          expect(t.observation).toBe(k + 1 < limit ? observationText(env, s.dbId, null, null, limit - k - 1) : null);
        }
        expect(e.error).toBeUndefined();
        expect(s.generation!.error).toBeUndefined();
        expect([e.endReason, e.formatValid, e.presetReward, e.finalSql, s.sql, s.ex]).toEqual([
          'turn-limit',
          false,
          -1,
          null,
          '',
          0,
        ]);
      }
      const stats = episodeStats(samples);
      expect([
        stats.episodes,
        stats.formatFailures,
        stats.cutByTurnLimit,
        stats.engineErrors,
        stats.noFinalSql,
      ]).toEqual([5, 5, 5, 0, 5]);
      expect(stats.turnsMean).toBe(limit);

      // The Turns panel: episodeStats of the stored samples.
      await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
      const panel = page.getByTestId('turns-panel');
      const count = async (key: string) => (await panel.locator(`[data-count="${key}"]`).textContent())?.trim();
      expect(await count('episodes')).toBe('5');
      expect(await count('turns-mean')).toBe(stats.turnsMean!.toFixed(2));
      // No episode ended on the engine's error: the panel leaves that count out.
      expect(await panel.locator('[data-count="engine-errors"]').count()).toBe(0);
      expect(await count('solution')).toBe('0');
      expect(await count('preset-reward')).toBe(stats.presetRewardMean!.toFixed(3));
      expect(stats.presetRewardMean).toBe(-1);
      expect(await count('no-final-sql')).toBe('5');
      expect(await count('turn-limit')).toBe('5');
      expect(await count('format-failure')).toBe('5');
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
        expect(await turns.count()).toBe(limit);
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
      // On a wide screen the item's pane scrolls: its last turns, in view.
      await view
        .getByTestId('turn')
        .nth(limit - 1)
        .scrollIntoViewIfNeeded();
      await screenshot(page, 'preset-run-trajectory-last-turns-1400x1000.png');
    }, 900_000);
  },
);
