import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { evalMinidev, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { sharedData, spiderFlags } from '../helpers/shared-data.ts';

const bird = (...p: string[]) => sharedData('bird', ...p);
type Item = {
  question_id: number;
  ex: number;
  status: string;
  version_features: { feature: string; since: string; where: string }[];
  gold_issues: { kind: string }[];
  ex_corrected_gold?: number;
};

describe('eval: SQLite version, version-sensitive items, gold issues, --gold-overlay (real mini-dev, the 3 databases here)', () => {
  it('meta-llama-3-70b CoT: names the SQLite of the verdicts, flags items 76/77 (CONCAT), scores the Arcwise-Plat overlay beside the official gold', async () => {
    // evalMinidev fails the test unless the CLI exits 0 with no error line.
    const { run, report: got } = await evalMinidev(
      bird('predictions', 'TA_output', 'predict_mini_dev_meta-llama-3-70b-instruct2_cot_SQLite.json'),
      ['--gold-overlay', bird('corrections', 'arcwise_plat_sql_only_with_diff.json'), '--workers', '2'],
    );
    expect(got.summary.sqlite_version).toMatch(/^3\.\d+\.\d+$/);
    expect(run.stdout).toContain(`verdicts from SQLite ${got.summary.sqlite_version}`);
    const items = got.items as Item[];
    // Positions 76 and 77 of the predictions file are questions 1460 and 1464.
    for (const q of [1460, 1464]) {
      expect(items.find((i) => i.question_id === q)!.version_features).toEqual([
        { feature: 'concat()', since: '3.44.0', where: 'pred' },
      ]);
      expect(run.stdout).toMatch(
        new RegExp(`question ${q} \\(student_club\\) EX 0: concat\\(\\) \\(3\\.44\\.0\\) in pred`),
      );
    }
    const flagged = items.filter((i) => i.version_features.length > 0);
    expect(got.summary.version_sensitive.count).toBe(flagged.length);
    expect(run.stdout).toContain(`version-sensitive items: ${flagged.length} of 140`);
    // Missing databases are not scored and not scanned.
    expect(
      items.filter((i) => i.status === 'missing-db' && (i.version_features.length || i.gold_issues.length)),
    ).toEqual([]);
    // Gold issues: mini-dev 1322 asks "how many" and its gold lists event names.
    expect(items.find((i) => i.question_id === 1322)!.gold_issues.map((g) => g.kind)).toEqual(['count-as-list']);
    // The overlay: totals recomputed from the per-item corrected verdicts, and the changed list matches them.
    const ov = got.summary.gold_overlay;
    const scored = items.filter((i) => i.status !== 'missing-db');
    expect(ov.golds_changed).toBe(38);
    expect(ov.corrected.ex).toBeCloseTo(
      (scored.reduce((a, i) => a + i.ex_corrected_gold!, 0) / scored.length) * 100,
      10,
    );
    expect(ov.official.ex).toBe(got.summary.by_difficulty.total.ex);
    expect(ov.changed_items.map((c: { question_id: number }) => c.question_id)).toEqual(
      scored.filter((i) => i.ex !== i.ex_corrected_gold).map((i) => i.question_id),
    );
    expect(run.stdout).toContain(`verdicts that change: ${ov.changed_items.length}`);
  }, 120_000);

  it('an overlay keyed by question_id without --dataset, and a malformed overlay, are errors naming the flag or file', async () => {
    const bad = tempFile('bad.jsonl');
    writeFileSync(bad, '{"question_id": 1460}\n');
    const base = [
      'eval',
      '--predictions',
      bird('predictions', 'TA_output', 'predict_mini_dev_meta-llama-3-70b-instruct2_cot_SQLite.json'),
      '--gold',
      bird('minidev', 'mini_dev_sqlite_gold.sql'),
      '--db-root',
      bird('databases'),
    ];
    const noDataset = await runCli([
      ...base,
      '--gold-overlay',
      bird('corrections', 'arcwise_plat_sql_only_with_diff.json'),
    ]);
    expect(noDataset.code).toBe(2);
    expect(noDataset.stderr).toMatch(/--gold-overlay.*--dataset|--dataset.*--gold-overlay/s);
    const malformed = await runCli([
      ...base,
      '--dataset',
      bird('minidev', 'mini_dev_sqlite.json'),
      '--gold-overlay',
      bad,
    ]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/bad\.jsonl:1.*question 1460: no "SQL"|question 1460: no "SQL".*bad\.jsonl/s);
  }, 60_000);

  it('gold-check on Spider dev: counts golds with no rows and the count/list mismatches', async () => {
    const out = tempFile('gold.json');
    const run = await runCli(['gold-check', ...spiderFlags(), '--workers', '2', '--out', out]);
    expect(run.code).toBe(0);
    const got = readJson(out);
    expect(got.checked).toBe(972);
    expect(got.by_kind['no-rows']).toBeGreaterThan(0);
    expect(
      got.items.find((i: { index: number }) => i.index === 161).issues.map((g: { kind: string }) => g.kind),
    ).toEqual(['count-as-list']);
    expect(run.stdout).toContain(`gold issues: ${got.items.length} question(s)`);
  }, 120_000);
});
