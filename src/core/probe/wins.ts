/**
 * The questions an exploit wins, as a person reads them: question id, database, and
 * the winning SQL when the probe kept its verdicts; and the same as CSV for an export.
 */
import type { Question } from '../types.ts';
import type { ProbeReport, ProbeVerdict, Semantics } from './run-probe.ts';

interface ProbeWin {
  exploit: string;
  semantics: Semantics;
  index: number;
  questionId: number | null;
  dbId: string | null;
  /** The first winning variant's SQL, when the report kept its verdicts. */
  sql: string | null;
}

/** Every win of every exploit under both semantics, in (exploit, semantics, index) order. */
export function probeWins(
  report: Pick<ProbeReport, 'exploits'> & { verdicts?: readonly ProbeVerdict[] },
  questions: readonly Question[] | null,
): ProbeWin[] {
  const out: ProbeWin[] = [];
  for (const e of report.exploits) {
    for (const semantics of ['official', 'readOnly'] as const) {
      for (const index of e[semantics].wonIndices) {
        const v = report.verdicts?.find(
          (x) => x.exploit === e.id && x.index === index && x[semantics].ex === 1 && x[semantics].status === 'ok',
        );
        const q = questions?.[index];
        out.push({
          exploit: e.id,
          semantics,
          index,
          questionId: q?.questionId ?? v?.questionId ?? null,
          dbId: q?.dbId ?? null,
          sql: v?.sql ?? null,
        });
      }
    }
  }
  return out;
}

const cell = (v: unknown) => {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** RFC 4180 CSV of the wins, with a header row. */
export function probeWinsCsv(wins: readonly ProbeWin[]): string {
  const head = ['exploit', 'semantics', 'index', 'question_id', 'db_id', 'sql'];
  return (
    [
      head.join(','),
      ...wins.map((w) => [w.exploit, w.semantics, w.index, w.questionId, w.dbId, w.sql].map(cell).join(',')),
    ].join('\r\n') + '\r\n'
  );
}
