/**
 * A batch plan made under a policy preset (version 2): what it records, and what the reader
 * refuses (an edited preset, a preset in a version-1 plan, a multi-turn preset). No file or
 * server: the plan text is made by the core's own writer.
 */
import { describe, expect, it } from 'vitest';
import {
  batchPlanJson,
  parseBatchPlan,
  planPresetSampling,
  presetBatchRequests,
  presetBatchSpec,
} from '../../../src/core/batch/batch.ts';
import {
  ARCTIC_TEXT2SQL_R1_PRESET,
  OMNISQL_PRESET,
  SKYRL_SQL_PRESET,
  presetFingerprint,
} from '../../../src/core/prompt/presets.ts';
import { PRESET_PLAN_QUESTIONS as questions, presetPlan } from '../../helpers/batch-fixtures.ts';

describe('batch plans under a preset', () => {
  it('round-trips through its file: the preset (id, fingerprint, content, self-consistency) and the per-sample sampling', () => {
    const plan = presetPlan(OMNISQL_PRESET, true);
    const back = parseBatchPlan(batchPlanJson(plan), 'p.plan.json');
    expect(back.version).toBe(2);
    expect(back.preset).toEqual({
      id: 'omnisql-v1',
      fingerprint: presetFingerprint(OMNISQL_PRESET),
      content: OMNISQL_PRESET,
      selfConsistency: true,
    });
    const s = planPresetSampling(back);
    expect(s.n).toBe(9);
    expect([0, 1, 8].map((i) => [s.paramsOf(i).temperature, s.paramsOf(i).seed])).toEqual([
      [0, 3],
      [0.8, 4],
      [0.8, 11],
    ]);
  });

  it('refuses a plan whose preset content was edited after the export (the fingerprint no longer matches)', () => {
    const plan = presetPlan(OMNISQL_PRESET);
    const edited = JSON.parse(batchPlanJson(plan));
    edited.preset.content.sampling.temperature = 0.3;
    expect(() => parseBatchPlan(JSON.stringify(edited), 'p.plan.json')).toThrow(
      /preset\.fingerprint is .* the content was edited/,
    );
  });

  it('refuses a version-1 plan that carries a preset (an older reader would ignore it)', () => {
    const v1 = { ...JSON.parse(batchPlanJson(presetPlan(OMNISQL_PRESET))), version: 1 };
    expect(() => parseBatchPlan(JSON.stringify(v1), 'p.plan.json')).toThrow(/version/);
  });

  it('a multi-turn preset cannot make a plan, and a plan file naming one is refused, by name', () => {
    expect(() => presetBatchSpec(SKYRL_SQL_PRESET, { selfConsistency: false, seed: 0, logprobs: false })).toThrow(
      /preset skyrl-sql-v1 is multi-turn.*generate --endpoint URL --model NAME --preset skyrl-sql-v1/,
    );
    const file = JSON.parse(batchPlanJson(presetPlan(OMNISQL_PRESET)));
    file.preset = {
      id: SKYRL_SQL_PRESET.id,
      fingerprint: presetFingerprint(SKYRL_SQL_PRESET),
      content: SKYRL_SQL_PRESET,
      selfConsistency: false,
    };
    expect(() => parseBatchPlan(JSON.stringify(file), 'p.plan.json')).toThrow(/preset skyrl-sql-v1 is multi-turn/);
  });

  it("each request carries the preset's prefill as a continued assistant message, its stop token ids, and only the wanted custom_ids", async () => {
    const plan = presetPlan(ARCTIC_TEXT2SQL_R1_PRESET);
    const out = await presetBatchRequests(
      plan,
      questions,
      async () => 'CREATE TABLE t0 (a INTEGER)',
      new Set(['q1-s0']),
    );
    expect(out.lines.map((l) => l.custom_id)).toEqual(['q1-s0']);
    const body = out.lines[0]!.body;
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
    expect(body.messages[1]!.content).toContain('rows means records\nHow many rows in t1?');
    expect(body.messages[2]!.content).toBe(ARCTIC_TEXT2SQL_R1_PRESET.prefill);
    expect(body).toMatchObject({
      continue_final_message: true,
      add_generation_prompt: false,
      stop_token_ids: [151645],
      seed: 3,
    });
  });
});
