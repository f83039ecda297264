/**
 * Batch files of a stored dataset: the plan and the OpenAI batch input JSONL
 * (src/core/batch/batch.ts), with prompts read by a SQL worker of its own (the executor factory's
 * schema source) from the stored databases, exactly as a generation run builds them
 * (generation-run.ts). Importing the output back is a generation run with the BatchEngine
 * (src/core/batch/batch-engine.ts).
 */
import { loadDatabaseContext, type DatabaseContext } from '../core/prompt/build-prompt.ts';
import {
  batchLineText,
  batchPlanJson,
  batchRequests,
  makeBatchPlan,
  presetBatchRequests,
  presetBatchSpec,
  withPromptHashes,
  type BatchPlan,
} from '../core/batch/batch.ts';
import type { PolicyPreset } from '../core/prompt/presets.ts';
import { WorkbenchError } from '../core/errors.ts';
import { presetSchemas, presetTables } from './generation-run.ts';
import { StoreError } from './store-errors.ts';
import type { BatchExportFiles, BatchExportRequest, DatasetRecord } from './records.ts';
import type { AppPorts } from './ports.ts';

export async function exportBatchFiles(
  ctx: AppPorts,
  dataset: DatasetRecord,
  req: BatchExportRequest,
): Promise<BatchExportFiles> {
  const available = new Set(await ctx.datasets.questionsWithDatabase(dataset));
  const wanted = req.indices.length > 0 ? req.indices : [...available];
  const indices = [...new Set(wanted)].filter((i) => available.has(i));
  const plan =
    req.redo?.plan ??
    (req.preset
      ? presetPlan(dataset, req, req.preset, indices)
      : makeBatchPlan({
          spec: req.spec,
          contextWindow: req.contextWindow,
          dataset: { name: dataset.name, questions: dataset.questionsFile, gold: dataset.goldFile },
          indices,
          questions: dataset.questions,
        }));
  if (req.redo && plan.dataset.questions && plan.dataset.questions.sha256 !== dataset.questionsFile.sha256) {
    throw new StoreError(
      'NOT_FOUND',
      `the plan was exported from ${plan.dataset.questions.name}, not from dataset "${dataset.name}": choose that dataset`,
    );
  }
  const schemas = await ctx.executors.openSchemaSource(
    ctx.datasets.source(dataset.databases, dataset.name),
    128 * 1024 * 1024,
  );
  const { source, dispose } = schemas;
  try {
    const only = req.redo ? new Set(req.redo.customIds) : undefined;
    const jsonl = new BlobParts();
    // A preset plan: the preset's messages over its schema rendering (the CLI's `batch export --preset`).
    const exported = plan.preset
      ? await presetBatchRequests(
          plan,
          dataset.questions,
          presetSchemas(plan.preset.content, schemas, presetTables(plan.preset.content, dataset, plan.indices)),
          only,
          (line) => jsonl.push(batchLineText(line)),
        )
      : await templateRequests(plan, only, jsonl);
    const hashed = withPromptHashes(plan, exported);
    return {
      plan: hashed,
      planJson: batchPlanJson(hashed),
      jsonl: jsonl.blob('application/jsonl'),
      requests: exported.count,
      tooLong: exported.tooLong,
    };
  } finally {
    dispose();
  }

  async function templateRequests(plan: BatchPlan, only: ReadonlySet<string> | undefined, jsonl: BlobParts) {
    const rows = plan.spec.sampleRows ?? plan.spec.template.sampleRows;
    const descriptions = plan.spec.descriptions ?? plan.spec.template.descriptions;
    const contexts = new Map<string, Promise<DatabaseContext>>();
    const database = (dbId: string) => {
      let c = contexts.get(dbId);
      if (!c) contexts.set(dbId, (c = loadDatabaseContext(source, dbId, { sampleRows: rows, descriptions })));
      return c;
    };
    // Streamed into Blob parts as the lines are made (as the CLI streams them to its file): no
    // line list and no one string of the whole batch, whatever n and the number of questions.
    return batchRequests(plan, dataset.questions, database, only, (line) => jsonl.push(batchLineText(line)));
  }
}

/**
 * The plan of a single-turn preset, made as the CLI's `batch export --preset` makes it (the
 * preset's sampling for the screen's n and seed, its stops and prefill); a multi-turn preset is
 * refused, saying why (each turn needs the database's answer to the previous probe).
 */
function presetPlan(
  dataset: DatasetRecord,
  req: BatchExportRequest,
  preset: PolicyPreset,
  indices: readonly number[],
): BatchPlan {
  if (preset.multiTurn)
    throw new WorkbenchError(
      'BAD_OPTION',
      `preset ${preset.id} is multi-turn: each of its turns needs the database's answer to the previous turn's probe, ` +
        'so it cannot be exported as an offline batch. Run it here with a loaded engine (Start), or with the CLI ' +
        `against a server: \`generate --endpoint URL --model NAME --preset ${preset.id}\``,
    );
  const made = presetBatchSpec(preset, {
    n: req.spec.params.n,
    selfConsistency: false,
    seed: req.spec.params.seed ?? 0,
    logprobs: req.spec.params.logprobs,
  });
  return makeBatchPlan({
    spec: { model: req.spec.model, template: made.template, params: made.params },
    contextWindow: null,
    dataset: { name: dataset.name, questions: dataset.questionsFile, gold: dataset.goldFile },
    indices,
    questions: dataset.questions,
    preset: made.preset,
  });
}

/** Text gathered into Blob parts every few MiB: the browser keeps Blob data outside the JS heap (and may page it to disk). */
class BlobParts {
  static readonly PART_CHARS = 4 * 1024 * 1024;
  readonly #blobs: Blob[] = [];
  #pending: string[] = [];
  #chars = 0;

  push(text: string): void {
    this.#pending.push(text);
    this.#chars += text.length;
    if (this.#chars >= BlobParts.PART_CHARS) this.#flush();
  }

  blob(type: string): Blob {
    this.#flush();
    return new Blob(this.#blobs, { type });
  }

  #flush(): void {
    if (this.#pending.length > 0) this.#blobs.push(new Blob(this.#pending));
    this.#pending = [];
    this.#chars = 0;
  }
}
