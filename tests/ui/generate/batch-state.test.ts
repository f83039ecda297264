/**
 * The Generate screen's batch panel and plans made under a policy preset: the app's runs do not
 * play presets yet, so such a plan is refused when it is chosen, with what to do (the CLI's
 * `batch import`), instead of being imported with prompts it cannot rebuild.
 */
import { describe, expect, it } from 'vitest';
import { batchPlanJson, makeBatchPlan } from '../../../src/core/batch/batch.ts';
import { GREEDY } from '../../../src/core/engine/engine.ts';
import { OMNISQL_PRESET } from '../../../src/core/prompt/presets.ts';
import { BIRD_MINIDEV_V1 } from '../../../src/core/prompt/templates.ts';
import { BatchState } from '../../../src/ui/generate/batch-state.svelte.ts';
import { presetPlan } from '../../helpers/batch-fixtures.ts';

describe('batch panel: choosing a plan', () => {
  it('refuses a plan exported under a preset, naming it and the CLI command; a template plan is taken', async () => {
    const bs = new BatchState();
    await bs.choosePlan(new File([batchPlanJson(presetPlan(OMNISQL_PRESET))], 'omni.plan.json'));
    expect(bs.plan).toBeNull();
    expect(bs.state.error).toContain('omni.plan.json was exported under preset omnisql-v1');
    expect(bs.state.error).toContain('batch import --plan omni.plan.json');

    const plain = makeBatchPlan({
      spec: { model: { id: 'm' }, template: BIRD_MINIDEV_V1, params: { ...GREEDY } },
      contextWindow: null,
      dataset: { name: 'q.json', questions: null, gold: null },
      indices: [0],
      questions: [{ questionId: 1, dbId: 'db', question: 'q', evidence: '', goldSql: '', difficulty: 'simple' }],
    });
    await bs.choosePlan(new File([batchPlanJson(plain)], 'plain.plan.json'));
    expect(bs.state.error).toBeNull();
    expect(bs.plan?.spec.template.id).toBe('bird-minidev-v1');
  });
});
