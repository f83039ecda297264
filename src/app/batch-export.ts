/**
 * Batch files of a stored dataset: the plan and the OpenAI batch input JSONL
 * (src/core/batch/batch.ts), with prompts read by a SQL worker of its own (the executor factory's
 * schema source) from the stored databases, exactly as a generation run builds them
 * (generation-run.ts). Importing the output back is a generation run with the BatchEngine
 * (src/core/batch/batch-engine.ts).
 */
import { loadDatabaseContext, type DatabaseContext } from '../core/prompt/build-prompt.ts';
import { batchLineText, batchPlanJson, batchRequests, makeBatchPlan, withPromptHashes } from '../core/batch/batch.ts';
import { StoreError } from '../adapters/store/errors.ts';
import type { BatchExportFiles, BatchExportRequest, DatasetRecord } from '../adapters/store/records.ts';
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
    makeBatchPlan({
      spec: req.spec,
      contextWindow: req.contextWindow,
      dataset: { name: dataset.name, questions: dataset.questionsFile, gold: dataset.goldFile },
      indices,
      questions: dataset.questions,
    });
  if (req.redo && plan.dataset.questions && plan.dataset.questions.sha256 !== dataset.questionsFile.sha256) {
    throw new StoreError(
      'NOT_FOUND',
      `the plan was exported from ${plan.dataset.questions.name}, not from dataset "${dataset.name}": choose that dataset`,
    );
  }
  const { source, dispose } = await ctx.executors.openSchemaSource(
    ctx.datasets.source(dataset.databases, dataset.name),
    128 * 1024 * 1024,
  );
  try {
    const rows = plan.spec.sampleRows ?? plan.spec.template.sampleRows;
    const descriptions = plan.spec.descriptions ?? plan.spec.template.descriptions;
    const contexts = new Map<string, Promise<DatabaseContext>>();
    const database = (dbId: string) => {
      let c = contexts.get(dbId);
      if (!c) contexts.set(dbId, (c = loadDatabaseContext(source, dbId, { sampleRows: rows, descriptions })));
      return c;
    };
    const only = req.redo ? new Set(req.redo.customIds) : undefined;
    // Streamed into Blob parts as the lines are made (as the CLI streams them to its file): no
    // line list and no one string of the whole batch, whatever n and the number of questions.
    const jsonl = new BlobParts();
    const exported = await batchRequests(plan, dataset.questions, database, only, (line) =>
      jsonl.push(batchLineText(line)),
    );
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
