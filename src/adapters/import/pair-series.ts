/**
 * One file of a training run read as steps and paired with a dataset's gold, in the import
 * worker (src/adapters/harness/series-dump.ts, then the core's replay plan per step): what the
 * app's series service evaluates. Pairing is not strict, as in the CLI's `series`: findings are
 * notes of the step.
 */
import { findingText } from '../../core/formats/pairing.ts';
import { withReplayEpisodes } from '../../core/formats/replay-episode.ts';
import { planReplay } from '../../core/run/replay.ts';
import { compileStepPattern } from '../../core/series/step-name.ts';
import { readSeriesDump } from '../harness/series-dump.ts';
import { pairingNote, trainerRewardsOf, trainerScoreOf } from '../../core/series/dump-step.ts';
import type { PairedSeriesDump, SeriesDumpJob } from '../../app/records.ts';
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
      const plan = planReplay({
        predictions: { ...step.predictions, name: step.source },
        gold: job.gold,
        questions: job.questions,
        fence: job.fence,
      });
      const paired = step.pairing ? pairingNote(step.pairing) : null;
      const trainerRewards = trainerRewardsOf(step, plan.items);
      return {
        step: step.step,
        source: step.source,
        format: step.format,
        // A multi-turn dump's samples keep their episodes (turns, the trainer's score) in the step's run.
        items: withReplayEpisodes(plan.items, step.format, step),
        trainerScores: plan.items.map((it) => trainerScoreOf(step, it.questionId, it.sample)),
        ...(trainerRewards ? { trainerRewards } : {}),
        wallTime: step.wallTime,
        notes: [
          ...(paired ? [paired] : []),
          ...(step.report ? [step.report] : []),
          ...plan.findings.map(findingText),
          ...plan.warnings,
        ],
        ...hash,
      };
    }),
  };
}
