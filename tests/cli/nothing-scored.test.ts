/**
 * Commands honest about failure: `gold-check` reports golds that fail as eval does (gold
 * errors) and exits 1; every command exits 2 with the reason when nothing was scored
 * (an empty --db-root, completions that match no question). Real BIRD mini-dev data.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonlFile, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, readBirdQuestions, sharedData } from '../helpers/shared-data.ts';
import { writeVerlDumps } from '../helpers/series-dumps.ts';

const emptyDir = () => mkdtempSync(path.join(tmpdir(), 'wb-empty-'));

describe('gold-check reports failing golds; commands exit 2 when nothing was scored', { timeout: 240_000 }, () => {
  it('gold-check: a gold on a missing table and a gold of two statements are "gold fails" issues, exit 1, as eval reports them', async () => {
    const gold = tempFile('gold.sql');
    writeFileSync(
      gold,
      [
        'SELECT superhero_name FROM superhero WHERE id = 1\tsuperhero',
        'SELECT * FROM no_such_table\tsuperhero',
        'SELECT 1; SELECT 2\tsuperhero',
      ].join('\n') + '\n',
    );
    const out = tempFile('gold-check.json');
    const r = await runCli(['gold-check', ...minidevFlags({ gold, dataset: null }), '--workers', '1', '--out', out]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain('gold queries checked: 3');
    expect(r.stdout).toMatch(/gold fails/);
    expect(r.stdout).toMatch(/no such table: no_such_table/);
    expect(r.stderr).toMatch(/2 gold queries fail: every prediction for them scores 0/);
    const report = readJson(out);
    expect(report.by_kind['gold-error']).toBe(2);
    expect(report.items.map((i: { index: number }) => i.index)).toEqual([1, 2]);

    // eval on the same golds calls both gold errors.
    const preds = tempFile('pred.sql');
    writeFileSync(preds, 'SELECT 1\nSELECT 1\nSELECT 1\n');
    const evalOut = tempFile('eval.json');
    const e = await runCli([
      'eval',
      '--predictions',
      preds,
      ...minidevFlags({ gold, dataset: null }),
      '--workers',
      '1',
      '--out',
      evalOut,
    ]);
    expect(e.code, e.stderr).toBe(0);
    expect(readJson(evalOut).summary.gold_issues.by_kind['gold-error']).toBe(2);
  });

  it('gold-check on the real mini-dev golds: every gold runs, exit 0', async () => {
    const r = await runCli(['gold-check', ...minidevFlags(), '--workers', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('gold queries checked: 140 (360 left out: database missing)');
    expect(r.stdout).not.toMatch(/gold fails/);
  });

  it('gold-check with an empty --db-root: exit 2, nothing was scored, naming the missing databases', async () => {
    const r = await runCli(['gold-check', ...minidevFlags({ dataset: null, dbRoot: emptyDir() }), '--workers', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /nothing was scored: none of the 500 item\(s\) could run against a database in .*\n.*database\(s\) missing \(expected <db-root>\/<db_id>\/<db_id>\.sqlite\): .*superhero/,
    );
    expect(r.stdout).not.toContain('checked: 0');
  });

  it('series: two steps against an empty --db-root: exit 2, nothing was scored, naming the missing databases, no output written', async () => {
    const dir = emptyDir();
    writeVerlDumps(path.join(dir, 'val'), [0, 1]);
    const out = path.join(dir, 'series.json');
    const r = await runCli([
      'series',
      '--completions',
      path.join(dir, 'val'),
      ...minidevFlags({ dbRoot: emptyDir() }),
      '--workers',
      '1',
      '--out',
      out,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /nothing was scored: none of the 140 item\(s\) could run against a database in .*\n.*database\(s\) missing \(expected <db-root>\/<db_id>\/<db_id>\.sqlite\): .*superhero/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('harness: 1,000 completions of "-" against an empty --db-root, and completions that match no question: exit 2 with the reason', async () => {
    const questions = readBirdQuestions(sharedData('bird', 'minidev', 'mini_dev_sqlite.json'));
    const harness = (completions: string, dbRoot: string) =>
      runCli(['harness', '--completions', completions, ...minidevFlags({ dbRoot }), '--workers', '1']);
    const file = jsonlFile(
      'dash.jsonl',
      Array.from({ length: 1000 }, (_, i) => ({
        doc_id: i % 500,
        doc: { question_id: questions[i % 500]!.question_id },
        resps: [['-']],
        filtered_resps: ['-'],
        filter: 'none',
      })),
    );
    const empty = await harness(file, emptyDir());
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/nothing was scored: none of the 1000 item\(s\) could run against a database/);

    const stranger = jsonlFile('stranger.jsonl', [
      {
        doc_id: 0,
        doc: { question_id: 999_999, question: 'How many dragons live in the library?' },
        resps: [['SELECT 1']],
        filtered_resps: ['SELECT 1'],
        filter: 'none',
      },
    ]);
    const none = await harness(stranger, sharedData('bird', 'databases'));
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /nothing was scored: no row of stranger\.jsonl matched a question of mini_dev_sqlite\.json/,
    );
  });
});
