/**
 * `rubric`'s per-criterion pass rates: standard output and `--out` (summary.pass_rates) equal a
 * direct count over the `--out` verdicts; the shipped example judged by a loopback OpenAI
 * server with recorded answers (a test double for the judge model).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, readJson, rubricArgs, runCli, tempFile } from '../helpers/cli.ts';
import { parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';
import { section, startJudgeServer, type ChatRequest, type JudgeServer } from './helpers/openai-server.ts';

const DATASET = path.join(ROOT, 'public/rubrics/example-rar.jsonl');
const COMPLETIONS = path.join(ROOT, 'public/rubrics/example-completions.jsonl');

/** Weak answers ("muscle strain", "air bubbles") meet nothing; every criterion whose title starts with a vowel is met by all. */
function recorded(req: ChatRequest): string {
  const user = req.messages.find((m) => m.role === 'user')!.content;
  if (user.includes('<criterion>')) {
    const title = section(req, 'criterion').split(':')[0]!;
    const bad = /muscle strain|air bubbles/.test(section(req, 'response'));
    return JSON.stringify({ criteria_met: /^[AEIOU]/.test(title) || !bad, explanation: 'recorded' });
  }
  return '{"score": 5, "explanation": "recorded"}';
}

interface Rate {
  group: string;
  criterion: string;
  passed: number;
  failed: number;
  n: number;
  pass_rate: number | null;
  not_discriminating: string | null;
}

let server: JudgeServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('rubric CLI: per-criterion pass rates', { timeout: 180_000 }, () => {
  it('lists each row criterion with its pass rate and flags the ones every sample passes or fails', async () => {
    server = await startJudgeServer(recorded);
    const out = tempFile('pass-rates.json');
    const run = await runCli([
      ...rubricArgs({ dataset: DATASET, completions: COMPLETIONS, judgeUrl: server.url, judgeModel: 'j' }),
      '--out',
      out,
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const got = readJson<{
      summary: { pass_rates: Rate[] };
      items: Array<{ id: string; scores: { criteria: Array<{ id: string; met: boolean | null; status: string }> } }>;
    }>(out);
    const rows = parseRarJsonl(readFileSync(DATASET, 'utf8'), 'example-rar.jsonl');
    // Direct count: per (row, criterion) over the row's samples; a negative-weight pitfall passes when not met.
    const want: Rate[] = rows.flatMap((row) => {
      const items = got.items.filter((i) => i.id === row.id);
      if (items.length === 0) return [];
      return row.rubric.items.map((c) => {
        const met = items.map((i) => i.scores.criteria.find((v) => v.id === c.id)!.met!);
        const passed = met.filter((m) => (c.weight < 0 ? !m : m)).length;
        const n = met.length;
        return {
          group: row.id,
          criterion: c.id,
          passed,
          failed: n - passed,
          n,
          pass_rate: passed / n,
          not_discriminating: n < 2 ? null : passed === n ? 'all-pass' : passed === 0 ? 'all-fail' : null,
        };
      });
    });
    expect(
      got.summary.pass_rates.map(({ group, criterion, passed, failed, n, pass_rate, not_discriminating }) => ({
        group,
        criterion,
        passed,
        failed,
        n,
        pass_rate,
        not_discriminating,
      })),
    ).toEqual(want);
    const flagged = want.filter((r) => r.not_discriminating);
    const discriminating = want.filter((r) => r.n >= 2 && !r.not_discriminating);
    // The recorded judge plants both: vowel-titled criteria pass everywhere, the others split the weak and sound answers.
    expect(flagged.length).toBeGreaterThan(0);
    expect(discriminating.length).toBeGreaterThan(0);
    const allPass = want.filter((r) => r.not_discriminating === 'all-pass').length;
    const allFail = want.filter((r) => r.not_discriminating === 'all-fail').length;
    expect(run.stdout).toContain(
      `pass rates: ${want.length} criteria (per row), ${allPass + allFail} not discriminating (${allPass} passed by every sample, ${allFail} failed by every sample), ${want.filter((r) => r.n < 2).length} with fewer than 2 verdicts`,
    );
    for (const r of want) {
      const line = run.stdout.split('\n').find((l) => l.startsWith(`  ${r.group} ${r.criterion} [`));
      expect(line, `${r.group} ${r.criterion}`).toContain(`${r.pass_rate!.toFixed(3)} (${r.passed}/${r.n})`);
      expect(line!.endsWith(r.not_discriminating ? `not discriminating: ${r.not_discriminating}` : ')')).toBe(true);
    }
  });
});
