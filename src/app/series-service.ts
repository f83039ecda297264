/**
 * The series service: training runs in the app (docs/series.md). A series is made from the
 * dumps of a training run (verl `<step>.jsonl`, lm-eval or Inspect logs one per checkpoint,
 * prime-rl `eval_rollouts.jsonl`, BIRD prediction files named by step), from a series file, or
 * from stored runs grouped by hand; it follows a folder, adding each new step file as it
 * appears. Every step is scored by `scoreSeriesStep` (series-step.ts, which the CLI's `series`
 * calls too: the run recipe, executing only SQL the series has not executed before) and stored as an ordinary run, so its
 * dashboard, explorer and comparisons are the runs'. Everything outside the core comes through
 * the ports (ports.ts).
 */
import { datasetExRule } from './ex-rule.ts';
import { WorkbenchError } from '../core/errors.ts';
import { lmEvalResultsName, type HarnessFormat } from '../core/formats/harness.ts';
import { scoreOfSummary } from '../core/run/score-run.ts';
import type { RunConfig } from '../core/run/types.ts';
import { SeriesVerdicts } from '../core/series/evaluate-step.ts';
import { scoreSeriesStep } from './series-step.ts';
import { verdictCacheOf } from './run-service.ts';
import { pollPause, StableFiles } from '../core/series/folder-poll.ts';
import { compileStepPattern, DEFAULT_STEP_RULE_TEXT, stepFromName } from '../core/series/step-name.ts';
import type { EvalItem } from '../core/types.ts';
import type { TrainerRewards } from '../core/series/model.ts';
import { StoreError } from './store-errors.ts';
import type {
  DatasetRecord,
  PairedDumpStep,
  SeriesFolderRecord,
  SeriesProgress,
  SeriesRecord,
  SeriesStepRecord,
} from './records.ts';
import type { FolderPort, SeriesAppPorts } from './ports.ts';
import { newRunHeader } from './run-header.ts';

/** Files of a folder a series reads: dumps and predictions, nothing hidden. */
export const SERIES_FOLDER_FILE = /\.(jsonl|json|eval|sql|parquet|pq)$/i;

interface SeriesHooks {
  signal?: AbortSignal;
  onProgress?: (p: SeriesProgress) => void;
  /** How each file's steps were found, mapping reports, pairing findings, files skipped. */
  onNote?: (note: string) => void;
}

export interface DumpFile {
  /** Path under the folder given (the step rule reads its folders too). */
  name: string;
  file: Blob;
  /** Modification time (ms since 1970), the step's wall time when the dump has none of its own; null when unknown. */
  lastModified: number | null;
}

export interface DumpImportRequest {
  name: string;
  datasetId: string;
  config: RunConfig;
  /** A regular expression with the step in a capture group; null: the built-in rules. */
  stepPattern: string | null;
  /** A dump format to read every file as; null detects each. */
  format: HarnessFormat | null;
  files: DumpFile[];
}

export interface GroupRunsRequest {
  name: string;
  /** Stored runs of one dataset, each with the step it stands for. */
  steps: Array<{ runId: string; step: number }>;
}

export interface SeriesService {
  list(): Promise<SeriesRecord[]>;
  get(seriesId: string): Promise<SeriesRecord>;
  /** The series a run is a step of (the run's pages link to it). */
  ofRun(runId: string): Promise<SeriesRecord[]>;
  /**
   * The trainer's score of each sample of a run that is a step of a training run (in the run's
   * (index, sample) order), with the series and step it comes from; null when the run is no step
   * or its step has no trainer's score. `rewards`: each sample's reward columns from the dump (same
   * order), where it had some.
   */
  trainerScores(runId: string): Promise<{
    seriesId: string;
    step: number;
    scores: Array<number | null>;
    rewards?: Array<TrainerRewards | null>;
  } | null>;
  rename(seriesId: string, name: string): Promise<void>;
  delete(seriesId: string): Promise<void>;
  /** The step rule as shown before import (`stepPattern` compiled, or the built-in rules); throws naming the pattern when it is no regular expression with a group. */
  stepRule(stepPattern: string | null): string;
  /** A new series from a training run's files, evaluated step by step in file-name order. */
  importDumps(req: DumpImportRequest, hooks?: SeriesHooks): Promise<SeriesRecord>;
  /** More step files for a series (evaluated with its settings, reusing its verdicts). */
  addDumps(
    seriesId: string,
    files: DumpFile[],
    hooks?: SeriesHooks & { format?: HarnessFormat | null },
  ): Promise<SeriesRecord>;
  /** A series file (from `series --series-out` or another machine's export), stored whole. */
  importSeriesFile(file: Blob, fileName: string): Promise<SeriesRecord>;
  /** A series of stored runs of one dataset, each given a step. */
  groupRuns(req: GroupRunsRequest): Promise<SeriesRecord>;
  /** The folder a series follows (its stored handle), if any. */
  folder(seriesId: string): Promise<SeriesFolderRecord | undefined>;
  /** A new, empty series that follows a folder (its handle stored, so a reload may follow it again). */
  createFollowed(
    req: Pick<DumpImportRequest, 'name' | 'datasetId' | 'config' | 'stepPattern'>,
    handle: FileSystemDirectoryHandle,
  ): Promise<SeriesRecord>;
  /**
   * Follows `folder` until `hooks.signal` aborts: every `pollMs` it lists the folder and adds each
   * new file once its size is the same at two polls (StableFiles), skipping files already taken.
   */
  follow(seriesId: string, folder: FolderPort, hooks: SeriesHooks & { pollMs: number }): Promise<void>;
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Work on the page's thread in slices, so that remembering a large series' verdicts never blocks it. */
const yieldToPage = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export function createSeriesService(opened: SeriesAppPorts | Promise<SeriesAppPorts>): SeriesService {
  const context = async () => opened;
  /** Each series' verdicts so far, remembered once per page (the steps' stored samples read back after a reload). */
  const verdictsOf = new Map<string, Promise<SeriesVerdicts>>();

  const rememberStored = async (ctx: SeriesAppPorts, series: SeriesRecord): Promise<SeriesVerdicts> => {
    const verdicts = new SeriesVerdicts();
    for (const s of series.steps) {
      const samples = await ctx.runs.samples(s.runId);
      for (let i = 0; i < samples.length; i += 500) {
        for (const x of samples.slice(i, i + 500)) verdicts.rememberSample(x);
        await yieldToPage();
      }
    }
    return verdicts;
  };
  const verdicts = (ctx: SeriesAppPorts, series: SeriesRecord): Promise<SeriesVerdicts> => {
    let v = verdictsOf.get(series.id);
    if (!v) {
      v = rememberStored(ctx, series);
      verdictsOf.set(series.id, v);
      v.catch(() => verdictsOf.delete(series.id));
    }
    return v;
  };

  /** Evaluates one step (nothing stored until it is complete), then stores its run and adds it to the series. */
  const addStep = async (
    ctx: SeriesAppPorts,
    series: SeriesRecord,
    dataset: DatasetRecord,
    paired: PairedDumpStep,
    fileTime: string | null,
    hooks: SeriesHooks,
    added: number,
    notes: string[] = paired.notes,
  ): Promise<SeriesRecord | null> => {
    const had = series.steps.find((s) => s.step === paired.step);
    if (had)
      throw new WorkbenchError(
        'MISMATCH',
        `step ${paired.step} is already in training run "${series.name}" (from ${had.source}); each step is evaluated once`,
        paired.source,
      );
    const report = (p: Partial<SeriesProgress>) =>
      hooks.onProgress?.({
        phase: 'evaluating',
        file: paired.source,
        step: paired.step,
        done: 0,
        total: paired.items.length,
        added,
        ...p,
      });
    report({});
    const executor = ctx.executors.createExecutor(ctx.datasets.source(dataset.databases, dataset.name), {
      suiteCache: ctx.datasets.suiteCache(dataset.databases),
    });
    let scored;
    try {
      // Spider's own rule (and hardness) for a Spider dataset, as a replay run of the same file gets (docs/spider-rules.md).
      scored = await scoreSeriesStep(
        paired.items,
        series.config,
        datasetExRule(dataset, series.config.exRule),
        {
          executor,
          questionOf: (i) => dataset.questions[i]?.question ?? null,
          signal: hooks.signal,
          onEvent: (e) => {
            if (e.type === 'item') report({ done: e.done, total: e.total });
          },
          // The verdict cache across runs (the same as the app's runs use; the series' setting).
          ...verdictCacheOf(ctx, series.config, dataset.databases),
        },
        await verdicts(ctx, series),
      );
    } finally {
      await executor.dispose().catch(() => undefined);
    }
    if (scored.cancelled || hooks.signal?.aborted) return null;
    const { config, items, records, executions } = scored;
    report({ phase: 'storing', done: items.length });
    const header = newRunHeader(
      {
        name: `${series.name} · step ${paired.step}`,
        source: { kind: 'replay', predictions: { name: paired.source, sha256: paired.sha256, bytes: paired.bytes } },
        subset: {
          description: `training run "${series.name}", step ${paired.step}`,
          indices: [...new Set(items.map((it) => it.index))],
        },
        config,
        samplesPerQuestion: items.reduce((m, it) => Math.max(m, (it.sample ?? 0) + 1), 1),
        executor: ctx.executors.name,
      },
      dataset,
    );
    if (scored.sqliteVersion) header.sqliteVersion = scored.sqliteVersion;
    // The trainer's scores in the stored run's (index, sample) order.
    const order = items.map((_, i) => i).sort((a, b) => itemOrder(items[a]!, items[b]!));
    const scores = order.map((i) => paired.trainerScores[i] ?? null);
    const rewards = paired.trainerRewards ? order.map((i) => paired.trainerRewards![i] ?? null) : undefined;
    await ctx.sessions.withLock(header.id, `run "${header.name}" is being written in another tab`, async () => {
      await ctx.runs.create(header, { items });
      const session = await ctx.sessions.open(header);
      for (const r of records) session.push(r);
      await session.finish(
        null,
        'done',
        { doneBefore: 0, total: records.length },
        { executions, score: scoreOfSummary(scored.summary) },
      );
    });
    // The dump's own time first (docs/series.md), else the file's modification time.
    const wallTime = paired.wallTime ?? fileTime;
    const step: SeriesStepRecord = {
      step: paired.step,
      runId: header.id,
      wallTime,
      wallTimeSource: paired.wallTime ? 'dump' : fileTime ? 'file' : null,
      source: paired.source,
      owned: true,
      executions,
      ...(notes.length > 0 ? { notes } : {}),
    };
    try {
      return await ctx.series.addStep(series.id, step, scores, rewards);
    } catch (err) {
      // The series changed under us (a step added in another tab, the series deleted): the run goes.
      await ctx.runs.delete(header.id).catch(() => undefined);
      throw err;
    }
  };

  /** Reads `files` in name order and adds each of their steps; returns the series as it ends. */
  const addFiles = async (
    ctx: SeriesAppPorts,
    series: SeriesRecord,
    files: DumpFile[],
    options: {
      format: HarnessFormat | null;
      stepPattern: string | null;
      /** Reads a file of the folder by its path (a followed folder); default: among `files`. */
      read?: (name: string) => Promise<Blob | null>;
    },
    hooks: SeriesHooks,
  ): Promise<SeriesRecord> => {
    const dataset = await ctx.datasets.get(series.datasetId);
    let current = series;
    let added = 0;
    // In step order where the names give one (verl dumps' rows carry theirs, read later), else by name.
    const rule = options.stepPattern ? compileStepPattern(options.stepPattern, 'step pattern') : undefined;
    const stepOf = (f: DumpFile) => stepFromName(f.name, rule)?.step ?? Number.POSITIVE_INFINITY;
    const ordered = [...files].sort((a, b) => stepOf(a) - stepOf(b) || byName(a, b));
    for (const f of ordered) {
      if (hooks.signal?.aborted) break;
      hooks.onProgress?.({ phase: 'reading', file: f.name, step: null, done: 0, total: 0, added });
      const dump = await ctx.dumps.read({
        fileName: f.name,
        file: f.file,
        questions: dataset.questions,
        gold: dataset.gold,
        fence: series.config.fence,
        format: options.format,
        stepPattern: options.stepPattern,
        siblings: await lmEvalSiblings(f.name, files, options.read),
      });
      for (const n of dump.notes) hooks.onNote?.(n);
      for (const step of dump.steps) {
        for (const n of step.notes) hooks.onNote?.(n);
        if (step.items.length === 0) continue;
        const fileTime = f.lastModified === null ? null : new Date(f.lastModified).toISOString();
        // Kept with the step: its own notes first (pairing), then how its file's steps were found.
        const notes = [...step.notes, ...dump.notes];
        const next = await addStep(ctx, current, dataset, step, fileTime, hooks, added, notes);
        if (!next) return current;
        current = next;
        added++;
      }
    }
    return current;
  };

  const newSeries = (
    req: { name: string; config: RunConfig },
    dataset: DatasetRecord,
    stepRule: string,
    origin: SeriesRecord['origin'],
  ): SeriesRecord => {
    const now = new Date().toISOString();
    return {
      id: crypto.randomUUID(),
      name: req.name,
      createdAt: now,
      updatedAt: now,
      datasetId: dataset.id,
      dataset: dataset.name,
      stepRule,
      origin,
      config: req.config,
      steps: [],
      runIds: [],
    };
  };

  const ruleText = (stepPattern: string | null) =>
    stepPattern ? `${compileStepPattern(stepPattern, 'step pattern').name} on the file's path` : DEFAULT_STEP_RULE_TEXT;

  return {
    async list() {
      return (await context()).series.list();
    },
    async get(seriesId) {
      return (await context()).series.get(seriesId);
    },
    async ofRun(runId) {
      return (await context()).series.ofRun(runId);
    },
    async trainerScores(runId) {
      const ctx = await context();
      for (const series of await ctx.series.ofRun(runId)) {
        const step = series.steps.find((s) => s.runId === runId);
        if (!step) continue;
        const scores = await ctx.series.scores(series.id, step.step);
        if (!scores.some((x) => x !== null)) continue;
        const rewards = await ctx.series.rewards(series.id, step.step);
        return { seriesId: series.id, step: step.step, scores, ...(rewards.length > 0 ? { rewards } : {}) };
      }
      return null;
    },
    async rename(seriesId, name) {
      await (await context()).series.rename(seriesId, name);
    },
    async delete(seriesId) {
      verdictsOf.delete(seriesId);
      await (await context()).series.delete(seriesId);
    },
    stepRule: ruleText,
    async folder(seriesId) {
      return (await context()).series.folder(seriesId);
    },

    async importDumps(req, hooks = {}) {
      const ctx = await context();
      if (req.files.length === 0)
        throw new WorkbenchError('MISSING_FILE', 'choose the step files of the training run (or their folder)');
      const dataset = await ctx.datasets.get(req.datasetId);
      const series = newSeries(req, dataset, ruleText(req.stepPattern), 'dumps');
      await ctx.series.create(series);
      const done = await addFiles(ctx, series, req.files, req, hooks);
      if (done.steps.length === 0 && !hooks.signal?.aborted) {
        await ctx.series.delete(series.id);
        throw new WorkbenchError(
          'MISMATCH',
          'no step had a row matching a question of the dataset: nothing was evaluated (the notes say why for each file)',
          req.files[0]!.name,
        );
      }
      return done;
    },

    async addDumps(seriesId, files, hooks = {}) {
      const ctx = await context();
      const series = await ctx.series.get(seriesId);
      const folder = await ctx.series.folder(seriesId);
      return addFiles(
        ctx,
        series,
        files,
        { format: hooks.format ?? null, stepPattern: folder?.stepPattern ?? null },
        hooks,
      );
    },

    async importSeriesFile(file, fileName) {
      return (await context()).seriesFiles.importSeriesFile(file, fileName);
    },

    async groupRuns(req) {
      const ctx = await context();
      if (req.steps.length === 0) throw new WorkbenchError('MISSING_FILE', 'pick the runs that make the training run');
      const steps = [...req.steps].sort((a, b) => a.step - b.step);
      for (let i = 1; i < steps.length; i++)
        if (steps[i]!.step === steps[i - 1]!.step)
          throw new WorkbenchError('MISMATCH', `two runs are given step ${steps[i]!.step}: give each run its own step`);
      const runs = await Promise.all(steps.map((s) => ctx.runs.get(s.runId)));
      const datasetId = runs[0]!.dataset.id;
      const other = runs.find((r) => r.dataset.id !== datasetId);
      if (other)
        throw new WorkbenchError(
          'MISMATCH',
          `run "${other.name}" is on dataset "${other.dataset.name}", not "${runs[0]!.dataset.name}": a training run's steps are on one dataset`,
        );
      const unfinished = runs.find((r) => r.status === 'running');
      if (unfinished)
        throw new StoreError(
          'LOCKED',
          `run "${unfinished.name}" is still being evaluated: group it once it has finished`,
        );
      const now = new Date().toISOString();
      const series: SeriesRecord = {
        id: crypto.randomUUID(),
        name: req.name,
        createdAt: now,
        updatedAt: now,
        datasetId,
        dataset: runs[0]!.dataset.name,
        stepRule: 'given by hand',
        origin: 'runs',
        config: runs[0]!.config,
        steps: steps.map((s, i) => ({
          step: s.step,
          runId: s.runId,
          wallTime: runs[i]!.createdAt,
          wallTimeSource: 'run' as const,
          source: runs[i]!.name,
          owned: false,
        })),
        runIds: steps.map((s) => s.runId),
      };
      await ctx.series.create(series);
      return series;
    },

    async createFollowed(req, handle) {
      const ctx = await context();
      const dataset = await ctx.datasets.get(req.datasetId);
      const series = newSeries(req, dataset, ruleText(req.stepPattern), 'folder');
      await ctx.series.create(series);
      await ctx.series.putFolder({
        seriesId: series.id,
        handle,
        name: handle.name,
        stepPattern: req.stepPattern,
        taken: [],
      });
      return series;
    },

    async follow(seriesId, folder, hooks) {
      const ctx = await context();
      const stored = await ctx.series.folder(seriesId);
      const taken = [...(stored?.taken ?? [])];
      const files = new StableFiles();
      for (const name of taken) files.markTaken(name);
      let added = 0;
      while (!hooks.signal?.aborted) {
        const listing = (await folder.list()).filter((f) => SERIES_FOLDER_FILE.test(f.name)).sort(byName);
        for (const name of files.poll(listing)) {
          if (hooks.signal?.aborted) break;
          const entry = listing.find((f) => f.name === name)!;
          let stopped: boolean;
          try {
            const series = await ctx.series.get(seriesId);
            const after = await addFiles(
              ctx,
              series,
              [{ name, file: await folder.read(name), lastModified: entry.lastModified }],
              {
                format: null,
                stepPattern: stored?.stepPattern ?? null,
                read: (n) => (listing.some((x) => x.name === n) ? folder.read(n) : Promise.resolve(null)),
              },
              { ...hooks, onProgress: (p) => hooks.onProgress?.({ ...p, added: added + p.added }) },
            );
            added += after.steps.length - series.steps.length;
            stopped = Boolean(hooks.signal?.aborted);
          } catch (err) {
            stopped = Boolean(hooks.signal?.aborted);
            // A bad file is reported and skipped; the series stays as it was, the watch goes on.
            if (!stopped) hooks.onNote?.(`${name}: ${(err as Error).message} (skipped; the watch goes on)`);
          }
          // A file whose evaluation was stopped is read again next time; the others never are.
          if (stopped) break;
          // A file read again after it changed (a step already in the series: refused, noted) is listed once.
          if (!taken.includes(name)) taken.push(name);
          if (stored) await ctx.series.putFolder({ ...stored, taken });
        }
        hooks.onProgress?.({ phase: 'waiting', file: null, step: null, done: 0, total: 0, added });
        // The pause removes its abort listener when it ends: none left behind per poll.
        await pollPause(hooks.pollMs, hooks.signal, {
          start: (ms, fire) => {
            const t = setTimeout(fire, ms);
            return () => clearTimeout(t);
          },
        });
      }
    },
  };
}

/**
 * The results file beside an lm-eval samples file (`results_<date>.json` in its folder), by its
 * base name, for the date it holds; empty for any other file or when it is not there.
 */
async function lmEvalSiblings(
  name: string,
  files: readonly DumpFile[],
  read: ((name: string) => Promise<Blob | null>) | undefined,
): Promise<Record<string, Blob>> {
  const at = Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1;
  const results = lmEvalResultsName(name.slice(at));
  if (!results) return {};
  const path = name.slice(0, at) + results;
  const blob = read ? await read(path).catch(() => null) : (files.find((f) => f.name === path)?.file ?? null);
  return blob ? { [results]: blob } : {};
}

function itemOrder(a: EvalItem, b: EvalItem): number {
  return a.index - b.index || (a.sample ?? 0) - (b.sample ?? 0);
}
