/**
 * The CLI's text for what the reward rewards, under the official table: which SQLite gave the
 * verdicts, the version-sensitive items, the gold issues and, with an overlay, both totals and
 * the items whose verdict changes. Pure, so tests read the same lines the CLI prints.
 */
import type { ItemResult } from '../types.ts';
import type { OverlayComparison } from './gold-overlay-run.ts';
import { rewardCounts } from './item-annotations.ts';
import { formatFixed2 } from '../eval/report.ts';
import { versionEffectsLine, versionVerdictText, type VersionEffects } from './version-effects.ts';

const who = (r: ItemResult) => `question ${r.questionId}${r.sample ? ` sample ${r.sample}` : ''} (${r.dbId})`;

export function sqliteLine(sqliteVersion: string | null, executor: string): string {
  return `verdicts from SQLite ${sqliteVersion ?? 'unknown'} (${executor}); the official evaluator uses the SQLite that its Python links (3.40.1 on Debian 12)`;
}

/**
 * The version-sensitive items. With `effects` (the flagged items re-run on the older engine),
 * the measured count comes first, then each item whose verdict differs with both verdicts; the
 * static flag stays as the reason on every line.
 */
export function versionReport(
  results: readonly ItemResult[],
  effects?: Pick<VersionEffects, 'checked' | 'differing' | 'otherVersion' | 'mainVersion' | 'otherTotal' | 'retimed'>,
): string {
  const { versionSensitive } = rewardCounts(results);
  const scored = results.filter((r) => r.status !== 'missing-db').length;
  const lines: string[] = [];
  if (effects) {
    lines.push(versionEffectsLine(effects));
    for (const r of effects.differing)
      lines.push(
        `  ${who(r)}: ${versionVerdictText(r, effects.mainVersion)}${r.versionCheck?.planner ? ' (planner difference)' : reasons(r)}`,
      );
  }
  lines.push(
    `version-sensitive items: ${versionSensitive.length} of ${scored} (SQL whose result can differ between SQLite versions${effects ? ': the static flag' : ''})`,
  );
  for (const r of versionSensitive) {
    const parts = new Map<string, string[]>();
    for (const f of r.versionFeatures!) {
      const key = `${f.feature} (${f.since})`;
      parts.set(key, [...(parts.get(key) ?? []), f.where]);
    }
    const check = r.versionCheck
      ? ` · ${r.versionCheck.differs ? 'differs' : 'same'} on ${r.versionCheck.sqliteVersion}`
      : '';
    lines.push(`  ${who(r)} EX ${r.ex}: ${[...parts].map(([k, w]) => `${k} in ${w.join('+')}`).join('; ')}${check}`);
  }
  return lines.join('\n');
}

function reasons(r: ItemResult): string {
  const f = r.versionFeatures ?? [];
  return f.length ? ` (flagged: ${[...new Set(f.map((x) => `${x.feature} (${x.since})`))].join('; ')})` : '';
}

export function goldIssuesReport(results: readonly ItemResult[]): string {
  const { goldIssues, goldIssueKinds } = rewardCounts(results);
  // Samples share their question's gold: list each question once.
  const seen = new Set<number>();
  const questions = goldIssues.filter((r) => !seen.has(r.index) && seen.add(r.index));
  const kinds = Object.entries(goldIssueKinds)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const lines = [`gold issues: ${questions.length} question(s)${kinds ? ` (${kinds})` : ''}`];
  for (const r of questions) lines.push(`  ${who(r)}: ${r.goldIssues!.map((g) => g.reason).join('; ')}`);
  return lines.join('\n');
}

export function overlayReport(c: OverlayComparison): string {
  const pct = (v: number | null) => (v === null ? '-' : formatFixed2(v));
  const lines = [
    `gold overlay ${c.overlay}: ${c.covered} question(s) covered, ${c.goldsChanged} item(s) with a changed gold`,
    `  EX official ${pct(c.official.byDifficulty.total.ex)}  corrected ${pct(c.corrected.byDifficulty.total.ex)}  (count ${c.corrected.byDifficulty.total.count})`,
    `  verdicts that change: ${c.changed.length}${c.changed.length ? ` (${c.changed.filter((x) => x.correctedEx === 1).length} gained, ${c.changed.filter((x) => x.correctedEx === 0).length} lost)` : ''}`,
  ];
  for (const x of c.changed)
    lines.push(
      `    question ${x.questionId}${x.sample ? ` sample ${x.sample}` : ''} (${x.dbId}): EX ${x.officialEx} -> ${x.correctedEx}`,
    );
  if (c.cancelled) lines.push('  (cancelled: the corrected totals cover only what finished)');
  return lines.join('\n');
}
