import { readFileSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/core/util/rng.ts';
import { evalMinidev, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { exactMcnemarP } from '../helpers/reference-stats.ts';
import { readBirdQuestions, sharedData } from '../helpers/shared-data.ts';

const bird = (...p: string[]) => sharedData('bird', ...p);
const DATASET = () => bird('minidev', 'mini_dev_sqlite.json');
const PRESENT = new Set(['superhero', 'student_club', 'toxicology']);

interface Item {
  index: number;
  sample: number;
  question_id: number;
  ex: 0 | 1;
  status: string;
  difficulty: string;
  db_id: string;
  result_key: string | null;
}

/** `eval --out` of a predictions file on mini-dev, one worker. */
const evalCli = (predictions: string, extra: string[] = []) =>
  evalMinidev<{ summary: any; items: Item[] }>(predictions, ['--workers', '1', ...extra]);

describe('compare on two real prediction files over the questions whose databases are present', () => {
  let a: Awaited<ReturnType<typeof evalCli>>;
  let b: Awaited<ReturnType<typeof evalCli>>;
  let runB: string;
  beforeAll(async () => {
    runB = tempFile('b.run.json');
    // One after the other, one worker each: other test files time real queries against 30 s limits.
    a = await evalCli(bird('predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json'));
    b = await evalCli(
      bird('predictions', 'sql_output_kg', 'predict_mini_dev_meta-llama-3-70b-instruct-2_sqlite.json'),
      ['--run-out', runB],
    );
  });

  it('counts fixed / broken / both right / both wrong exactly as the per-item verdicts of the two evals', async () => {
    const out = tempFile('cmp.json');
    const run = await runCli(['compare', a.out, runB, '--seed', '7', '--out', out]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const got = readJson(out);

    const present = a.report.items.filter((i) => i.status !== 'missing-db');
    expect(present).toHaveLength(140);
    const byIndexB = new Map(b.report.items.map((i) => [i.index, i]));
    const want = { fixed: 0, broken: 0, both_right: 0, both_wrong: 0 };
    for (const ia of present) {
      const eb = byIndexB.get(ia.index)!.ex;
      if (ia.ex === 1 && eb === 1) want.both_right++;
      else if (ia.ex === 1) want.broken++;
      else if (eb === 1) want.fixed++;
      else want.both_wrong++;
    }
    expect(got.questions).toBe(140);
    expect(got.counts).toEqual(want);
    expect(want.fixed + want.broken).toBeGreaterThan(0);

    const exA = a.report.summary.by_difficulty.total.ex;
    const exB = b.report.summary.by_difficulty.total.ex;
    expect(got.ex_delta).toBeCloseTo(exB - exA, 9);
    expect(got.ci95[0]).toBeLessThanOrEqual(got.ex_delta);
    expect(got.ci95[1]).toBeGreaterThanOrEqual(got.ex_delta);
    expect(got.mcnemar_p / exactMcnemarP(want.fixed, want.broken)).toBeCloseTo(1, 9);
    for (const level of ['simple', 'moderate', 'challenging']) {
      expect(got.by_difficulty[level].ex_delta).toBeCloseTo(
        b.report.summary.by_difficulty[level].ex - a.report.summary.by_difficulty[level].ex,
        9,
      );
    }
    expect(Object.keys(got.by_db).sort()).toEqual([...PRESENT].sort());
    // One side is an eval report without checksums: said so, not hidden.
    expect(got.warnings.join('\n')).toMatch(/records no database checksums/);
    expect(run.stdout).toMatch(/^total +140 +/m);

    // The same seed gives the same interval; the two eval reports compare the same way.
    const again = tempFile('cmp2.json');
    expect((await runCli(['compare', a.out, b.out, '--seed', '7', '--out', again])).code).toBe(0);
    expect(readJson(again)).toMatchObject({ counts: want, ci95: got.ci95, mcnemar_p: got.mcnemar_p });
  });

  it('states n = 1 statistics of an eval report: pass@1 is the EX, no GRPO signal', async () => {
    const out = tempFile('stats.json');
    const run = await runCli(['stats', '--run', a.out, '--out', out]);
    expect(run.code).toBe(0);
    const s = readJson(out);
    expect(s).toMatchObject({
      questions: 140,
      samples_per_question: 1,
      zero_variance_share: 0,
      frontier_share: 0,
      excluded_missing_db: 360,
    });
    expect(s.pass_at_k['1'] * 100).toBeCloseTo(a.report.summary.by_difficulty.total.ex, 9);
    expect(s.maj_at_k['1']).toBe(s.pass_at_k['1']);
    expect(run.stdout).toMatch(/GRPO groups: none \(n = 1; GRPO needs n >= 2/);
    // No group statistic is printed for n = 1 (it would read "zero variance 0.0 %", "mean |advantage| 0.771").
    expect(run.stdout).not.toMatch(/zero variance|mean \|advantage\||zero-var|GRPO advantage per sample/);
  });

  it('rejects bad input with exit code 2 and a message naming the flag or file', async () => {
    const one = await runCli(['compare', a.out]);
    expect(one.code).toBe(2);
    expect(one.stderr).toMatch(/RUN_A RUN_B: name exactly two run files/);
    const k = await runCli(['stats', '--run', runB, '--k', '1,2']);
    expect(k.code).toBe(2);
    expect(k.stderr).toMatch(/--k: k = 2 is not possible: k must be an integer from 1 to 1/);
    const bad = tempFile('bad.json');
    writeFileSync(bad, JSON.stringify({ format: 'rlvr-workbench-run', version: 1, run: {}, samples: [] }));
    const badRun = await runCli(['stats', '--run', bad]);
    expect(badRun.code).toBe(2);
    expect(badRun.stderr).toMatch(/bad\.json: run\.source must be an object, found missing/);
    const seed = await runCli(['compare', a.out, runB, '--seed', '1.5']);
    expect(seed.stderr).toMatch(/--seed: expected an integer from 0 to 4,294,967,295/);
  });
});

/**
 * A JSONL file with 4 samples for 10 mini-dev questions whose database is present. Each
 * question's samples follow a pattern: G = the gold SQL (inside a fenced completion or as
 * `sql`), W / V = two wrong constant results (W also as a textually different twin), E = a
 * failing query, N = a completion without SQL. Lines: a `completions` pair then a `sqls` pair.
 */
const PATTERNS = ['GGGG', 'WWEW', 'GWWG', 'GNWE', 'GWVE', 'WWGG', 'EEEE', 'GGGW', 'NWVG', 'GVVW'];
const WRONG: Record<string, string> = { W: 'SELECT -987654321', V: 'SELECT 424242', E: 'SELECT nope FROM nowhere' };

function completion(kind: string, gold: string): string {
  if (kind === 'G') return `Let me think.\n\`\`\`sql\n${gold}\n\`\`\``;
  if (kind === 'N') return 'I cannot answer this question.';
  return `\`\`\`sql\n${WRONG[kind]}\n\`\`\``;
}
// The second W of a question is written differently (same result): votes follow results, not text.
const sqlOf = (kind: string, gold: string, twin: boolean) =>
  kind === 'G' ? gold : kind === 'W' && twin ? 'SELECT  -987654321 ;' : WRONG[kind]!;

function subsets(n: number, k: number): number[][] {
  if (k === 0) return [[]];
  if (n < k) return [];
  return [...subsets(n - 1, k), ...subsets(n - 1, k - 1).map((s) => [...s, n - 1])];
}

describe('several samples per question: eval --run-out, then stats', () => {
  it('reports pass@k and maj@k equal to brute force over the per-sample results', async () => {
    const questions = readBirdQuestions(DATASET());
    const chosen = questions
      .filter((q) => PRESENT.has(q.db_id))
      .filter((_, i) => i % 13 === 0)
      .slice(0, 10);
    expect(chosen).toHaveLength(10);
    const lines: string[] = [];
    chosen.forEach((q, i) => {
      const p = PATTERNS[i]!;
      lines.push(
        JSON.stringify({
          question_id: q.question_id,
          completions: [completion(p[0]!, q.SQL), completion(p[1]!, q.SQL)],
        }),
      );
      lines.push(
        JSON.stringify({
          question_id: q.question_id,
          sqls: [sqlOf(p[2]!, q.SQL, p.slice(0, 2).includes('W')), sqlOf(p[3]!, q.SQL, true)],
        }),
      );
    });
    const jsonl = tempFile('samples.jsonl');
    writeFileSync(jsonl, lines.join('\n') + '\n');

    const runFile = tempFile('run.json');
    const { run: evalRun, report } = await evalCli(jsonl, ['--run-out', runFile, '--reward', 'ex + 0.1 * format']);
    expect(evalRun.stdout).toMatch(
      /n = 4 samples per question \(40 samples\): each score is the mean over a question's samples/,
    );
    expect(report.items).toHaveLength(40);
    expect(report.items.map((i) => i.sample)).toEqual(chosen.flatMap(() => [0, 1, 2, 3]));

    const rf = readJson(runFile);
    expect(rf).toMatchObject({
      format: 'rlvr-workbench-run',
      version: 1,
      run: { samplesPerQuestion: 4, config: { rewardFormula: 'ex + 0.1 * format' } },
    });
    expect(Object.keys(rf.run.dataset.databases).sort()).toEqual(
      [...PRESENT].filter((d) => chosen.some((q) => q.db_id === d)).sort(),
    );
    for (const sha of Object.values(rf.run.dataset.databases)) expect(sha).toMatch(/^[0-9a-f]{64}$/);
    expect(rf.questions).toHaveLength(10);

    // Group the run's samples per question, in gold order, and check them against the design.
    const byQ = new Map<number, any[]>();
    for (const s of rf.samples) byQ.set(s.index, [...(byQ.get(s.index) ?? []), s]);
    const groups = [...byQ.entries()]
      .sort((x, y) => x[0] - y[0])
      .map(([, ss]) => ss.sort((x: any, y: any) => x.sample - y.sample));
    expect(groups).toHaveLength(10);
    const patternOf = new Map(chosen.map((q, i) => [q.question_id, PATTERNS[i]!]));
    for (const ss of groups) {
      const p = patternOf.get(ss[0].questionId)!;
      expect(ss.map((s: any) => s.ex).join(''), `question ${ss[0].questionId}`).toBe(
        [...p].map((c) => (c === 'G' ? 1 : 0)).join(''),
      );
      expect(ss.map((s: any) => s.format).join('')).toBe([...p].map((c) => (c === 'N' ? 0 : 1)).join(''));
      expect(ss.map((s: any) => s.reward)).toEqual(ss.map((s: any) => s.ex + 0.1 * s.format));
      const keys = ss.map((s: any) => s.resultKey ?? null);
      [...p].forEach((c, j) => {
        if (c === 'E') expect(keys[j]).toBeNull();
        else expect(keys[j]).toMatch(/^[0-9a-f]{16}$/);
        [...p].forEach((d, m) => {
          if (c !== 'E' && d !== 'E' && c !== 'N' && d !== 'N')
            expect(keys[j] === keys[m], `${p} ${j} ${m}`).toBe(c === d);
        });
      });
    }

    const seed = 11;
    const out = tempFile('stats.json');
    const csv = tempFile('prompts.csv');
    const frontier = tempFile('frontier.jsonl');
    const stats = await runCli([
      'stats',
      '--run',
      runFile,
      '--k',
      '1,2,3,4',
      '--seed',
      String(seed),
      '--out',
      out,
      '--csv',
      csv,
      '--frontier-jsonl',
      frontier,
    ]);
    expect(stats.code).toBe(0);
    const got = readJson(out);

    // Brute force from the per-sample EX and result keys. A voter executed and held SQL.
    const voter = (s: any) => s.resultKey !== undefined && s.format === 1;
    const rng = mulberry32(seed);
    const want = { pass: [0, 0, 0, 0], maj: [0, 0, 0, 0] };
    for (const ss of groups) {
      for (let k = 1; k <= 4; k++) {
        const subs = subsets(4, k);
        want.pass[k - 1]! += subs.filter((sub) => sub.some((i) => ss[i].ex === 1)).length / subs.length / groups.length;
        if (k < 4) {
          let sum = 0;
          for (const sub of subs) {
            const votes = new Map<string, { n: number; ex: number }>();
            for (const i of sub)
              if (voter(ss[i]))
                votes.set(ss[i].resultKey, { n: (votes.get(ss[i].resultKey)?.n ?? 0) + 1, ex: ss[i].ex });
            if (votes.size === 0) continue;
            const max = Math.max(...[...votes.values()].map((v) => v.n));
            const top = [...votes.values()].filter((v) => v.n === max);
            sum += top.reduce((a, v) => a + v.ex, 0) / top.length;
          }
          want.maj[k - 1]! += sum / subs.length / groups.length;
        }
      }
      // maj@4: one vote, groups in order of first appearance, a tie broken by the seeded draw.
      const order: string[] = [];
      const size = new Map<string, number>();
      const exOf = new Map<string, number>();
      for (const s of ss.filter(voter)) {
        if (!size.has(s.resultKey)) order.push(s.resultKey);
        size.set(s.resultKey, (size.get(s.resultKey) ?? 0) + 1);
        exOf.set(s.resultKey, s.ex);
      }
      if (order.length > 0) {
        const max = Math.max(...size.values());
        const top = order.filter((key) => size.get(key) === max);
        const win = top.length === 1 ? top[0]! : top[Math.floor(rng.next() * top.length)]!;
        want.maj[3]! += exOf.get(win)! / groups.length;
      }
    }
    expect(got.questions).toBe(10);
    expect(got.samples_per_question).toBe(4);
    for (let k = 1; k <= 4; k++) {
      expect(got.pass_at_k[String(k)], `pass@${k}`).toBeCloseTo(want.pass[k - 1]!, 12);
      expect(got.maj_at_k[String(k)], `maj@${k}`).toBeCloseTo(want.maj[k - 1]!, 12);
    }
    const rewards = groups.map((ss) => ss.map((s: any) => s.reward));
    const passRates = groups.map((ss) => ss.filter((s: any) => s.ex === 1).length / 4);
    expect(got.zero_variance_share).toBeCloseTo(
      rewards.filter((r) => r.every((x: number) => x === r[0])).length / 10,
      12,
    );
    expect(got.frontier_share).toBeCloseTo(passRates.filter((p) => p > 0 && p < 1).length / 10, 12);
    expect(got.best_of_n.oracle).toBeCloseTo(want.pass[3]!, 12);

    // Exports: one CSV row per prompt, and the frontier prompts with their texts.
    expect(readFileSync(csv, 'utf8').trim().split('\r\n')).toHaveLength(11);
    const fr = readFileSync(frontier, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(fr).toHaveLength(passRates.filter((p) => p > 0 && p < 1).length);
    for (const f of fr) {
      expect(Object.keys(f).slice(0, 5)).toEqual(['question_id', 'db_id', 'question', 'evidence', 'pass_rate']);
      expect(f.question.length).toBeGreaterThan(0);
      expect(f.pass_rate).toBeGreaterThan(0);
      expect(f.pass_rate).toBeLessThan(1);
    }
  });
});
