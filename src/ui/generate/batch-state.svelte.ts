/**
 * The Generate screen's batch files: export the screen's plan (dataset, questions, template,
 * sampling) as an OpenAI batch input JSONL plus its plan file for a cluster (vLLM's run_batch,
 * SGLang, OpenAI's Batch API, Ray Data LLM), then import the output JSONL back as a generation
 * run, scored through the same loop with the BatchEngine (src/core/batch/batch-engine.ts).
 */
import type { GenerationRunRequest, WorkbenchStore } from '../../app/store-ports.ts';
import type { Engine, ModelRef, SamplingParams } from '../../core/engine/engine.ts';
import type { PolicyPreset } from '../../core/prompt/presets.ts';
import type { PromptTemplate } from '../../core/prompt/templates.ts';
import { errorMessage } from '../../core/errors.ts';
import {
  BATCH_ENGINE,
  checkPlanFitsDataset,
  parseBatchPlan,
  planCustomIds,
  type BatchPlan,
} from '../../core/batch/batch.ts';
import { BatchEngine } from '../../core/batch/batch-engine.ts';
import { forEachUtf8Line } from '../shell/utf8-file.ts';
import {
  BatchOutputReader,
  batchCoverage,
  coverageText,
  mergeBatchOutputs,
  type BatchCoverage,
  type BatchOutput,
} from '../../core/batch/batch-output.ts';
import { quickCheckIndices } from '../../core/run/generation.ts';
import { DEFAULT_RUN_CONFIG } from '../../core/run/types.ts';
import { downloadBlob, downloadText, safeFileName } from '../shell/download.ts';
import { WorkbenchError } from '../../core/errors.ts';
/** What the batch panel reads from the Generate screen's state (GenerateState is one). */
interface BatchSource {
  readonly state: {
    readonly datasetId: string | null;
    readonly subset: 'quick' | 'first' | 'all';
    readonly firstN: number;
    readonly name: string;
    readonly sampleRows: number | null;
    readonly running: boolean;
  };
  readonly model: ModelRef | null;
  template(): PromptTemplate;
  params(): SamplingParams;
  /** The chosen policy preset, or null (the template). */
  preset(): PolicyPreset | null;
  startWith(
    store: WorkbenchStore,
    engine: Engine,
    req: GenerationRunRequest,
    onDone: (runId: string) => void,
  ): Promise<void>;
}

/** The batch panel's own fields (the plan, output and coverage are `$state.raw`, apart). */
interface BatchFields {
  /** The model name the cluster serves (the `model` of every line). */
  model: string;
  /** Context window to fit prompts to; null: prompts are never cut. */
  contextWindow: number | null;
  busy: boolean;
  /** What the last export wrote, in a sentence. */
  exported: string | null;
  error: string | null;
  /** The chosen plan file's name. */
  planName: string;
  /** The chosen output files' names. */
  outputNames: readonly string[];
}

export class BatchState {
  #s = $state<BatchFields>({
    model: '',
    contextWindow: null,
    busy: false,
    exported: null,
    error: null,
    planName: '',
    outputNames: [],
  });
  #plan = $state.raw<BatchPlan | null>(null);
  #output = $state.raw<BatchOutput | null>(null);
  #coverage = $state.raw<BatchCoverage | null>(null);

  /** The panel's settings and messages, read-only: the methods below change it. */
  get state(): Readonly<BatchFields> {
    return this.#s;
  }
  get plan(): BatchPlan | null {
    return this.#plan;
  }
  get output(): BatchOutput | null {
    return this.#output;
  }
  get coverage(): BatchCoverage | null {
    return this.#coverage;
  }

  setModel(model: string): void {
    this.#s.model = model;
  }
  setContextWindow(tokens: number | null): void {
    this.#s.contextWindow = tokens;
  }

  /** The name of the model line: what the user typed, else the loaded engine's model. */
  modelName(g: BatchSource): string {
    return this.#s.model.trim() || g.model?.id || '';
  }

  async exportPlan(g: BatchSource, store: WorkbenchStore): Promise<void> {
    if (!g.state.datasetId || this.#s.busy) return;
    await this.#whileBusy(async () => {
      const available = await store.datasets.questionsWithDatabase(g.state.datasetId!);
      const indices =
        g.state.subset === 'first'
          ? available.slice(0, Math.max(1, g.state.firstN))
          : g.state.subset === 'all'
            ? available
            : quickCheckIndices(available);
      const spec = {
        model: { id: this.modelName(g) },
        template: g.template(),
        params: g.params(),
        ...(g.state.sampleRows !== null ? { sampleRows: g.state.sampleRows } : {}),
      };
      // A single-turn preset: its messages, sampling and stops in every line (a multi-turn one is refused, saying why).
      const preset = g.preset();
      const files = await store.service.exportBatch(g.state.datasetId!, {
        indices,
        spec,
        contextWindow: this.#s.contextWindow,
        ...(preset ? { preset } : {}),
      });
      const base = safeFileName(g.state.name.trim() || `${spec.model.id}-${preset ? preset.id : spec.template.id}`);
      downloadBlob(`${base}.jsonl`, files.jsonl);
      downloadText(`${base}.plan.json`, files.planJson, 'application/json');
      this.#s.exported =
        `${files.requests} requests (${files.plan.indices.length} questions × ${files.plan.spec.params.n} samples${preset ? `, preset ${preset.id}` : ''}) in ${base}.jsonl, plan in ${base}.plan.json` +
        (files.tooLong.length
          ? `; ${files.tooLong.length} left out, their prompt does not fit the context window`
          : '');
    });
  }

  async choosePlan(file: File): Promise<void> {
    await this.#whileBusy(async () => {
      this.#plan = null;
      const plan = parseBatchPlan(await file.text(), file.name);
      // The app's generation runs do not play presets yet: a preset plan's prompts would not be rebuilt.
      if (plan.preset)
        throw new WorkbenchError(
          'REFUSED',
          `${file.name} was exported under preset ${plan.preset.id}: import it with the CLI (\`batch import --plan ${file.name} ...\`), which scores it with the preset's extraction rule`,
        );
      this.#plan = plan;
      this.#s.planName = file.name;
      this.#cover();
    });
  }

  async chooseOutputs(files: readonly File[]): Promise<void> {
    await this.#whileBusy(async () => {
      this.#output = null;
      const parsed: BatchOutput[] = [];
      // Read line by line from each file's stream: an output file may be larger than one string can hold.
      for (const f of files) {
        const reader = new BatchOutputReader(f.name);
        await forEachUtf8Line(f, (line) => reader.line(line));
        parsed.push(reader.finish());
      }
      this.#output = mergeBatchOutputs(parsed);
      this.#s.outputNames = files.map((f) => f.name);
      this.#cover();
    });
  }

  coverageLine(): string | null {
    return this.plan && this.coverage ? coverageText(this.coverage, planCustomIds(this.plan).length) : null;
  }

  /** The missing and failed requests of the plan as a smaller batch. */
  async exportMissing(g: BatchSource, store: WorkbenchStore): Promise<void> {
    const { plan, coverage } = this;
    if (!plan || !coverage || !g.state.datasetId) return;
    await this.#whileBusy(async () => {
      const customIds = [...coverage.missing, ...coverage.failed];
      const files = await store.service.exportBatch(g.state.datasetId!, {
        indices: [],
        spec: plan.spec,
        contextWindow: plan.contextWindow,
        redo: { plan, customIds },
      });
      downloadBlob(`${safeFileName(this.#s.planName.replace(/\.plan\.json$/, ''))}-missing.jsonl`, files.jsonl);
      this.#s.exported = `${files.requests} missing and failed requests exported; run them and import their output together with the first one`;
    });
  }

  /** A generation run of the chosen dataset whose completions are the output's lines. */
  async importRun(g: BatchSource, store: WorkbenchStore, onDone: (runId: string) => void): Promise<void> {
    const { plan, output } = this;
    if (!plan || !output || !g.state.datasetId || g.state.running) return;
    this.#s.error = null;
    const dataset = await store.datasets.get(g.state.datasetId);
    if (!dataset) return;
    if (plan.dataset.questions && plan.dataset.questions.sha256 !== dataset.questionsFile.sha256) {
      this.#s.error = `${this.#s.planName} was exported from ${plan.dataset.questions.name}, not from dataset "${dataset.name}": choose that dataset above`;
      return;
    }
    try {
      checkPlanFitsDataset(plan, dataset.questions.length, this.#s.planName);
    } catch (err) {
      this.#s.error = errorMessage(err);
      return;
    }
    const engine = new BatchEngine(plan, dataset.questions, output, this.#s.outputNames.join(', '));
    const name = g.state.name.trim() || `${plan.spec.model.id} · ${plan.spec.template.id} · batch`;
    await g.startWith(
      store,
      engine,
      {
        name,
        datasetId: dataset.id,
        subset: {
          description: `batch plan ${this.#s.planName}: ${plan.indices.length} questions`,
          indices: plan.indices,
        },
        spec: { ...plan.spec, engine: BATCH_ENGINE },
        config: { ...DEFAULT_RUN_CONFIG, metrics: ['ex', 'soft-f1'] },
      },
      onDone,
    );
  }

  #cover(): void {
    this.#coverage = this.plan && this.output ? batchCoverage(this.plan, this.output) : null;
  }

  async #whileBusy(work: () => Promise<void>): Promise<void> {
    this.#s.busy = true;
    this.#s.error = null;
    try {
      await work();
    } catch (err) {
      this.#s.error = errorMessage(err);
    } finally {
      this.#s.busy = false;
    }
  }
}
