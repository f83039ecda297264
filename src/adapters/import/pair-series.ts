/**
 * One file of a training run read as steps and paired with a dataset's gold, in the import
 * worker (src/adapters/harness/series-dump.ts, then each step paired by the app's pairDumpStep, as
 * the CLI's `series` pairs it): what the app's series service evaluates. Findings are notes of
 * the step.
 */
import { compileStepPattern } from '../../core/series/step-name.ts';
import { readSeriesDump } from '../harness/series-dump.ts';
import type { PairedSeriesDump, SeriesDumpJob } from '../../app/records.ts';
import { pairDumpStep } from '../../app/pair-dump-step.ts';
import { sha256Of } from './hash-stream.ts';

export async function pairSeriesDump(job: SeriesDumpJob): Promise<PairedSeriesDump> {
  const rule = job.stepPattern ? compileStepPattern(job.stepPattern, 'step pattern') : undefined;
  const siblings = job.siblings ?? {};
  const dump = await readSeriesDump(job.fileName, job.file, job.questions, {
    format: job.format,
    rule,
    sibling: async (name) => siblings[name] ?? null,
  });
  const hash = await sha256Of(job.file);
  return {
    notes: dump.notes,
    steps: dump.steps.map((step) => {
      if (step.matched === 0)
        return {
          step: step.step,
          source: step.source,
          format: step.format,
          items: [],
          trainerScores: [],
          wallTime: step.wallTime,
          notes: [step.report!, `${step.source}: no row matched a question; nothing to evaluate`],
          ...hash,
        };
      const paired = pairDumpStep(step, { gold: job.gold, questions: job.questions, fence: job.fence });
      return {
        step: step.step,
        source: step.source,
        format: step.format,
        items: paired.items,
        trainerScores: paired.trainerScores,
        ...(paired.trainerRewards ? { trainerRewards: paired.trainerRewards } : {}),
        wallTime: step.wallTime,
        notes: [
          ...(paired.pairingNote ? [paired.pairingNote] : []),
          ...(step.report ? [step.report] : []),
          ...paired.warnings,
        ],
        ...hash,
      };
    }),
  };
}
