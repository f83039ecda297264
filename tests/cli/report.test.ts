/**
 * `report` (docs/report.md): the mini-dev gpt-4o replay run as `eval --run-out` writes it, with
 * a second run to compare and a two-step training run, as one HTML file: its size, its policy
 * (the inline script's sha256 in a CSP that allows no request), and the runs it carries read
 * back equal to the run files read directly.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { zlibGzip } from '../../src/adapters/node/report-files.ts';
import { readReportFile, reportDataOf, unpackReportData } from '../../src/core/report/report-file.ts';
import { openReportPayload } from '../../src/core/report/payload.ts';
import { RESULT_ROWS_BUDGET } from '../../src/core/report/limits.ts';
import { previewOf, resultRowsText } from '../../src/core/report/result-rows.ts';
import initSqlJs from 'sql.js';
import { runFileJson } from '../../src/core/runfile/export.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS, writeVerlDumps } from '../helpers/series-dumps.ts';
import { sharedData } from '../helpers/shared-data.ts';

const PRED = (dir: string, f: string) => sharedData('bird', 'predictions', dir, f);
const GPT4O = PRED('TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json');
const GPT4T = PRED('TA_output', 'predict_mini_dev_gpt-4-turbo_cot_SQLite.json');
const common = ['--gold', MINIDEV_GOLD, '--dataset', MINIDEV_QUESTIONS, '--db-root', DB_ROOT];
const MiB = 1024 * 1024;

const dir = mkdtempSync(path.join(tmpdir(), 'wb-report-'));
const at = (f: string) => path.join(dir, f);

async function cli(args: string[]): Promise<string> {
  const run = await runCli(args);
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}

describe('report: a run, a comparison and a training run as one offline HTML file', () => {
  beforeAll(async () => {
    await cli(['eval', '--predictions', GPT4O, ...common, '--run-out', at('gpt4o.run.json')]);
    await cli(['eval', '--predictions', GPT4T, ...common, '--run-out', at('gpt4t.run.json')]);
    writeVerlDumps(at('val'), [0, 1]);
    await cli(['series', '--completions', at('val'), ...common, '--series-out', at('two.series.json')]);
  }, 600_000);

  it('the gpt-4o replay run: under 2 MiB, a policy that allows no request, the run read back as the run file', async () => {
    const out = await cli(['report', '--run', at('gpt4o.run.json'), '--out', at('gpt4o.html')]);
    expect(out).toMatch(
      /^wrote .*gpt4o\.html: \d+\.\d\d MiB, 500 samples; run "predict_mini_dev_gpt-4-o_cot_SQLite\.json"/,
    );
    expect(statSync(at('gpt4o.html')).size).toBeLessThan(2 * MiB);
    const html = readFileSync(at('gpt4o.html'), 'utf8');

    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)" \/>/.exec(html)?.[1];
    expect(csp).toMatch(
      /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]+='; style-src 'unsafe-inline'; img-src data:; connect-src 'none'; worker-src 'none'; base-uri 'none'; form-action 'none'$/,
    );
    // The one executable script is the one the policy names, by its hash.
    const script = /<script type="module" crossorigin>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const hash = createHash('sha256').update(script, 'utf8').digest('base64');
    expect(csp).toContain(`'sha256-${hash}'`);
    expect(html.match(/<script\b[^>]*>/g)).toEqual([
      '<script type="module" crossorigin>',
      '<script type="application/octet-stream" id="rlvr-report-data">',
    ]);
    // The policy comes before anything that could load.
    expect(html.indexOf('Content-Security-Policy')).toBeLessThan(html.indexOf('<script'));

    const report = await readReportFile(html, 'gpt4o.html', zlibGzip);
    const version = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(report.product).toBe(`rlvr-workbench ${version} (CLI)`);
    expect(report.compare).toBe(false);
    expect(report.series).toBeNull();
    const direct = parseRunFile(readFileSync(at('gpt4o.run.json'), 'utf8'), 'gpt4o.run.json');
    expect(report.runs.map(runFileJson)).toEqual([runFileJson(direct)]);
    expect(report.runs[0]!.questions).toHaveLength(500);
  });

  it('with --compare and --series: both runs (A first) and the training run, each as its own file reads', async () => {
    await cli([
      'report',
      '--run',
      at('gpt4o.run.json'),
      '--compare',
      at('gpt4t.run.json'),
      '--series',
      at('two.series.json'),
      '--out',
      at('all.html'),
    ]);
    const report = await readReportFile(readFileSync(at('all.html'), 'utf8'), 'all.html', zlibGzip);
    expect(report.compare).toBe(true);
    expect(report.runs.map((f) => f.run.name)).toEqual([path.basename(GPT4O), path.basename(GPT4T)]);
    expect(runFileJson(report.runs[1]!)).toBe(
      runFileJson(parseRunFile(readFileSync(at('gpt4t.run.json'), 'utf8'), 'gpt4t.run.json')),
    );
    const series = parseSeriesFile(readFileSync(at('two.series.json'), 'utf8'), 'two.series.json');
    expect(report.series?.steps.map((s) => s.step)).toEqual([100, 200]);
    expect(JSON.stringify(report.series!.steps.map((s) => s.run))).toBe(JSON.stringify(series.steps.map((s) => s.run)));
  });

  it('--exclude: the report carries the exclusions for the --run and --compare runs, says how many; a bad line is refused naming it', async () => {
    const direct = parseRunFile(readFileSync(at('gpt4o.run.json'), 'utf8'), 'gpt4o.run.json');
    const ids = [direct.samples[0]!.questionId, direct.samples[1]!.questionId];
    const lines = ids.map((id) =>
      JSON.stringify({ question_id: id, reason: 'gold is wrong', author: 'Ana', date: '2026-12-07' }),
    );
    writeFileSync(
      at('ex.jsonl'),
      `${lines.join('\n')}\n${JSON.stringify({ question_id: 999_999, reason: 'x', author: 'Ana', date: '2026-12-07' })}\n`,
    );
    const run = await runCli([
      'report',
      '--run',
      at('gpt4o.run.json'),
      '--compare',
      at('gpt4t.run.json'),
      '--exclude',
      at('ex.jsonl'),
      '--out',
      at('ex.html'),
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      '2 questions excluded (--exclude ex.jsonl): every metric is over the other questions; 1 listed question id(s) are not in this run',
    );
    const report = await readReportFile(readFileSync(at('ex.html'), 'utf8'), 'ex.html', zlibGzip);
    const list = [...ids, 999_999].map((questionId) => ({
      questionId,
      reason: questionId === 999_999 ? 'x' : 'gold is wrong',
      author: 'Ana',
      date: '2026-12-07',
    }));
    expect(report.exclusions).toEqual(report.runs.map((f) => ({ ownerId: f.run.id, list })));
    // Without --exclude the report carries none.
    expect(
      (await readReportFile(readFileSync(at('gpt4o.html'), 'utf8'), 'gpt4o.html', zlibGzip)).exclusions,
    ).toBeUndefined();

    writeFileSync(at('bad.jsonl'), `${lines[0]}\n{"question_id": 3}\n`);
    const bad = await runCli([
      'report',
      '--run',
      at('gpt4o.run.json'),
      '--exclude',
      at('bad.jsonl'),
      '--out',
      at('y.html'),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.jsonl.*line 2/);
    expect(() => statSync(at('y.html'))).toThrow();
  });

  it('--db-root: the wrong samples of the run and of every step keep the rows sql.js gives, within the budget; without it stderr says why there are none', async () => {
    const run = await runCli([
      'report',
      '--run',
      at('gpt4o.run.json'),
      '--series',
      at('two.series.json'),
      '--db-root',
      DB_ROOT,
      '--out',
      at('rows.html'),
    ]);
    expect(run.code, run.stderr).toBe(0);
    const payload = openReportPayload(
      await unpackReportData(reportDataOf(readFileSync(at('rows.html'), 'utf8'))!, zlibGzip, 'rows.html'),
      'rows.html',
    );
    const rows = payload.resultRows!;
    // The run's and every step's wrong samples (EX 0 on a database), each run once, the --run first.
    const runFile = parseRunFile(readFileSync(at('gpt4o.run.json'), 'utf8'), 'gpt4o.run.json');
    const series = parseSeriesFile(readFileSync(at('two.series.json'), 'utf8'), 'two.series.json');
    const files = [runFile, ...series.steps.map((s) => s.run)];
    const wrong = files.flatMap((f) =>
      f.samples.filter((x) => x.ex !== 1 && x.status !== 'missing-db').map((x) => ({ f, x })),
    );
    expect(rows.wrong).toBe(wrong.length);
    expect(rows.items.length + rows.noRows + rows.leftOut).toBe(wrong.length);
    expect([rows.rowsPerSide, rows.maxItems, rows.maxBytes]).toEqual([
      RESULT_ROWS_BUDGET.rowsPerSide,
      RESULT_ROWS_BUDGET.maxItems,
      RESULT_ROWS_BUDGET.maxBytes,
    ]);
    expect(run.stderr).toContain(`result rows: ${resultRowsText(rows)}`);
    // Kept samples of the run and of a step, each equal to what sql.js gives for its prediction and gold.
    const SQL = await initSqlJs();
    const firstRows = (dbId: string, sql: string): unknown[][] => {
      const db = new SQL.Database(readFileSync(path.join(DB_ROOT, dbId, `${dbId}.sqlite`)));
      try {
        const st = db.prepare(sql);
        const out: unknown[][] = [];
        while (out.length < RESULT_ROWS_BUDGET.rowsPerSide && st.step()) out.push(st.get());
        st.free();
        return out;
      } finally {
        db.close();
      }
    };
    const checked = new Set<string>();
    for (const item of rows.items) {
      if (checked.has(item.runId) || item.predRows.length === 0) continue;
      const { x } = wrong.find((w) => w.f.run.id === item.runId && w.x.index === item.index)!;
      expect(previewOf(item).predRows).toEqual(firstRows(x.dbId, x.sql!));
      expect(previewOf(item).goldRows).toEqual(firstRows(x.dbId, x.goldSql));
      checked.add(item.runId);
    }
    // One sample of each run (the --run file and both steps) checked.
    expect(checked).toEqual(new Set(files.map((f) => f.run.id)));

    // Without --db-root: no rows, and stderr names the flag.
    const bare = await runCli(['report', '--run', at('gpt4o.run.json'), '--out', at('bare.html')]);
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.stderr).toContain('the report has no result rows of its wrong samples');
    expect(bare.stderr).toContain('give --db-root DIR');
    const none = openReportPayload(
      await unpackReportData(reportDataOf(readFileSync(at('bare.html'), 'utf8'))!, zlibGzip, 'bare.html'),
      'bare.html',
    );
    expect(none.resultRows).toBeUndefined();
  }, 600_000);

  it('refuses what it cannot make, naming the flag or the file, and writes nothing', async () => {
    const same = await runCli([
      'report',
      '--run',
      at('gpt4o.run.json'),
      '--compare',
      at('gpt4o.run.json'),
      '--out',
      at('x.html'),
    ]);
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/are the same run \(id [0-9a-f-]+\): a comparison needs two different runs/);
    const noOut = await runCli(['report', '--run', at('gpt4o.run.json')]);
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toContain("--out: is required (the report's HTML file)");
    const notRun = await runCli(['report', '--run', at('two.series.json'), '--out', at('x.html')]);
    expect(notRun.code).toBe(2);
    expect(notRun.stderr).toMatch(/two\.series\.json: not a run file/);
    expect(() => statSync(at('x.html'))).toThrow();
  });
});
