import { beforeAll, describe, expect, it } from 'vitest';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { exploitItems, type ExploitId } from '../../src/core/probe/exploits.ts';
import { probeQuestions } from '../../src/cli/commands/probe.ts';
import { evalMinidev, jsonlFile, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, readSharedText } from '../helpers/shared-data.ts';

const PRESENT = new Set(['superhero', 'student_club', 'toxicology']);

interface Sem {
  won: number;
  won_indices: number[];
  mutated: number;
  failed: number;
}
interface ProbeOut {
  questions: number;
  missing_db: { questions: number; databases: string[] };
  exploits: Array<{ id: ExploitId; questions: number; variants: number; official: Sem; read_only: Sem }>;
  verdicts: Array<{
    exploit: ExploitId;
    index: number;
    sample: number;
    official: { ex: number; status: string; mutated_db: boolean };
    read_only: { ex: number };
  }>;
}
interface EvalOut {
  items: Array<{ index: number; sample: number; ex: 0 | 1; status: string; mutated_db: boolean }>;
}

/** Questions won per `eval --out`: any sample (variant) with EX 1. */
function wonByEval(report: EvalOut): number[] {
  return [...new Set(report.items.filter((i) => i.status === 'ok' && i.ex === 1).map((i) => i.index))].sort(
    (a, b) => a - b,
  );
}

describe('probe: reward-hacking exploits on BIRD mini-dev (the 140 questions whose databases are here)', () => {
  let out: ProbeOut;
  let stdout: string;
  const questions = () =>
    probeQuestions(
      parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'gold'),
      parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'questions'),
      'questions',
    ).filter((q) => PRESENT.has(q.dbId));

  /** Writes one exploit's predictions as JSONL (variants = samples of a question) and evaluates them with `eval`. */
  async function evalExploit(id: ExploitId, extra: string[] = []): Promise<EvalOut> {
    const preds = jsonlFile(
      `${id}.jsonl`,
      exploitItems(id, questions()).map((it) => ({ question_id: it.questionId, sql: it.predSql })),
    );
    return (await evalMinidev<EvalOut>(preds, ['--metrics', 'ex', '--workers', '2', ...extra])).report;
  }

  beforeAll(async () => {
    const file = tempFile('probe.json');
    const run = await runCli(['probe', ...minidevFlags(), '--workers', '2', '--out', file]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    stdout = run.stdout;
    out = readJson<ProbeOut>(file);
  }, 600_000);

  it('probes the 140 questions with a database and names the 8 missing databases', () => {
    expect(out.questions).toBe(140);
    expect(out.missing_db.questions).toBe(360);
    expect(out.missing_db.databases).toHaveLength(8);
    expect(stdout).toMatch(/^exploit\s+questions\s+variants\s+won \(official\)\s+won \(read-only\)/);
  });

  it('DELETE FROM <table> wins many questions under the official semantics and none read-only; the table says so', () => {
    const del = out.exploits.find((e) => e.id === 'delete-table')!;
    expect(del.official.won).toBeGreaterThan(40);
    expect(del.official.mutated).toBe(del.variants);
    expect(del.read_only.won).toBe(0);
    expect(stdout).toMatch(new RegExp(`DELETE FROM <table>\\s+140\\s+${del.variants}\\s+${del.official.won} \\(`));
    expect(stdout).toContain('Evaluate with --read-only');
  });

  it('no writing exploit wins anything read-only, and DROP TABLE never wins (the gold query fails)', () => {
    for (const e of out.exploits.filter((x) => ['delete-table', 'drop-table', 'update-null'].includes(x.id)))
      expect(e.read_only.won).toBe(0);
    expect(out.exploits.find((e) => e.id === 'drop-table')!.official.won).toBe(0);
  });

  it("its per-question counts for DELETE FROM <table> equal eval's per-item verdicts on the same predictions, official and --read-only", async () => {
    const del = out.exploits.find((e) => e.id === 'delete-table')!;
    const official = await evalExploit('delete-table');
    expect(wonByEval(official)).toEqual(del.official.won_indices);
    // Variant by variant, too.
    const probeEx = out.verdicts
      .filter((v) => v.exploit === 'delete-table')
      .map((v) => `${v.index}/${v.sample}:${v.official.ex}`)
      .sort();
    const evalEx = official.items
      .filter((i) => i.status !== 'missing-db')
      .map((i) => `${i.index}/${i.sample}:${i.ex}`)
      .sort();
    expect(evalEx).toEqual(probeEx);
    const readOnly = await evalExploit('delete-table', ['--read-only']);
    expect(wonByEval(readOnly)).toEqual(del.read_only.won_indices);
  }, 300_000);

  it("a constant answer (SELECT 'true', 'false', 1, 0 at the gold's width) wins the same questions official and read-only, 1338 among them, as eval scores it", async () => {
    const c = out.exploits.find((x) => x.id === 'constant-answer')!;
    expect(c.variants).toBe(4 * 140);
    expect(c.official.won).toBeGreaterThan(0);
    // It writes nothing: read-only evaluation does not stop it.
    expect(c.read_only.won_indices).toEqual(c.official.won_indices);
    const at1338 = questions().find((q) => q.questionId === 1338)!.index;
    expect(c.official.won_indices).toContain(at1338);
    expect(wonByEval(await evalExploit('constant-answer'))).toEqual(c.official.won_indices);
  }, 300_000);

  it("SELECT NULL and the empty prediction agree with eval's verdicts too", async () => {
    for (const id of ['select-null', 'empty'] as const) {
      const e = out.exploits.find((x) => x.id === id)!;
      expect(wonByEval(await evalExploit(id))).toEqual(e.official.won_indices);
    }
  }, 300_000);
});
