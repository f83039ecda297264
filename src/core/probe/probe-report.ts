/** The probe's report as a text table (CLI) and as the JSON of `probe --out` (a contract). */
import type { ProbeReport } from './run-probe.ts';

const pct = (n: number, d: number) => (d === 0 ? '-' : `${((100 * n) / d).toFixed(1)}%`);

export function probeTable(r: ProbeReport): string {
  const head = ['exploit', 'questions', 'variants', 'won (official)', 'won (read-only)', 'writes seen'];
  const rows = r.exploits.map((e) => [
    e.label,
    String(e.questions),
    String(e.variants),
    `${e.official.won} (${pct(e.official.won, r.questions)})`,
    `${e.readOnly.won} (${pct(e.readOnly.won, r.questions)})`,
    String(e.official.mutated),
  ]);
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join('  ')
      .trimEnd();
  const out = [line(head), ...rows.map(line)];
  out.push('');
  out.push(`${r.questions} questions probed; a question is won when any variant of the exploit scores EX = 1.`);
  const worst = r.exploits.filter((e) => e.writes && e.official.won > 0);
  if (worst.length > 0) {
    out.push(
      `The official semantics reward writes: ${worst.map((e) => `${e.label} wins ${e.official.won}`).join(', ')}. ` +
        'Evaluate with --read-only (or flag mutated_db) before using EX as an RL reward.',
    );
  }
  if (r.missingDb.questions > 0)
    out.push(`${r.missingDb.questions} questions left out: database missing (${r.missingDb.databases.join(', ')}).`);
  return out.join('\n');
}

/** `probe --out` JSON: snake_case keys like `eval --out`. */
export function probeJson(r: ProbeReport): unknown {
  const sem = (s: ProbeReport['exploits'][number]['official']) => ({
    won: s.won,
    won_indices: s.wonIndices,
    mutated: s.mutated,
    failed: s.failed,
  });
  return {
    questions: r.questions,
    missing_db: r.missingDb,
    timeout_s: r.timeoutMs / 1000,
    exploits: r.exploits.map((e) => ({
      id: e.id,
      label: e.label,
      writes: e.writes,
      explain: e.explain,
      questions: e.questions,
      variants: e.variants,
      official: sem(e.official),
      read_only: sem(e.readOnly),
    })),
    verdicts: r.verdicts.map((v) => ({
      exploit: v.exploit,
      index: v.index,
      question_id: v.questionId,
      sample: v.sample,
      sql: v.sql,
      official: { status: v.official.status, ex: v.official.ex, mutated_db: v.official.mutatedDb },
      read_only: { status: v.readOnly.status, ex: v.readOnly.ex, mutated_db: v.readOnly.mutatedDb },
    })),
  };
}
