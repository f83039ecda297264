/** The analysis worker's progress as one line of the RL and Compare views. */
import type { AnalysisProgress } from '../../adapters/store/workbench-store.ts';

export function progressText(p: AnalysisProgress | null): string {
  if (!p) return 'Loading…';
  const of = `${p.done.toLocaleString('en')} of ${p.total.toLocaleString('en')}`;
  return p.phase === 'reading' ? `Reading samples: ${of}…` : `Computing: ${of} steps…`;
}
