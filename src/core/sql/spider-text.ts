/**
 * The texts Spider's execution match runs (docs/spider-rules.md): test-suite-sql-eval
 * normalises both the prediction and the gold before it executes them. The row comparison is
 * src/core/compare/spider-ex.ts.
 */
import { tokenizeSql } from './sql-tokens.ts';

/**
 * The texts test-suite-sql-eval executes: its `postprocess` (comparison operators written with
 * a space joined again), its `remove_distinct` (the DISTINCT keyword dropped wherever it is,
 * strings and quoted names left alone) and `replace_cur_year`.
 */
export function spiderQueryText(sql: string): string {
  let text = sql.replaceAll('> =', '>=').replaceAll('< =', '<=').replaceAll('! =', '!=');
  const cuts = tokenizeSql(text).filter((t) => t.kind === 'word' && t.value.toLowerCase() === 'distinct');
  for (let k = cuts.length - 1; k >= 0; k--) {
    const t = cuts[k]!;
    text = text.slice(0, t.start) + text.slice(t.start + t.text.length);
  }
  return text.replace(/YEAR\s*\(\s*CURDATE\s*\(\s*\)\s*\)\s*/gi, '2020');
}

/** Row order counts when the (normalised) gold text contains `order by`, as a plain substring. */
export function spiderOrderMatters(goldText: string): boolean {
  return goldText.toLowerCase().includes('order by');
}
