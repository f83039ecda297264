/**
 * The Training runs page's forms: a series from a training run's files (or a followed folder),
 * with the step of each file shown by the rule before anything is evaluated (the built-in rules,
 * or the user's pattern); and a series of stored runs grouped by hand, each given its step.
 */
import { errorMessage } from '../../core/errors.ts';
import type { HarnessFormat } from '../../core/formats/harness.ts';
import {
  compileStepPattern,
  DEFAULT_STEP_RULE_TEXT,
  stepFromName,
  type StepRule,
} from '../../core/series/step-name.ts';
import type { RunHeader } from '../../core/run/types.ts';
import type { DatasetRecord } from '../../app/records.ts';
import type { DumpFile, DumpImportRequest, GroupRunsRequest } from '../../app/series-service.ts';
import { SERIES_FOLDER_FILE } from '../../app/series-service.ts';
import { RunConfigDraft } from '../workbench/run-config-draft.svelte.ts';
import type { PickedFile } from '../workbench/file-sources.ts';

/** A picked file and the step its name gives by the rule (null: none; a verl dump's rows may still carry theirs). */
interface StepPreview {
  name: string;
  bytes: number;
  step: number | null;
  rule: string | null;
}

/** The training-run form's own fields (its files are `$state.raw`, apart; the configuration is `config`). */
interface SeriesDraftFields {
  datasetId: string | null;
  name: string;
  stepPattern: string;
  format: HarnessFormat | null;
  /** Files of the picked folder left out (not .jsonl/.json/.eval, or hidden). */
  skipped: number;
}

export class SeriesDraft extends RunConfigDraft {
  #s = $state<SeriesDraftFields>({
    datasetId: null,
    name: '',
    stepPattern: '',
    format: null,
    skipped: 0,
  });
  #nameTouched = false;
  #files = $state.raw<DumpFile[]>([]);

  #rule = $derived.by((): { rule: StepRule | undefined; error: string | null } => {
    const p = this.#s.stepPattern.trim();
    if (!p) return { rule: undefined, error: null };
    try {
      return { rule: compileStepPattern(p, 'step pattern'), error: null };
    } catch (err) {
      return { rule: undefined, error: errorMessage(err) };
    }
  });
  /** In the order the files are evaluated: by the step their name gives, then by name. */
  #preview = $derived.by((): StepPreview[] =>
    this.#files
      .map((f) => {
        const m = this.#rule.error ? null : stepFromName(f.name, this.#rule.rule);
        return { name: f.name, bytes: f.file.size, step: m?.step ?? null, rule: m?.rule ?? null };
      })
      .sort((a, b) => (a.step ?? Number.POSITIVE_INFINITY) - (b.step ?? Number.POSITIVE_INFINITY)),
  );

  /** What the form shows of its fields, read-only: the methods below change them. */
  get state(): Readonly<SeriesDraftFields> {
    return this.#s;
  }
  get files(): readonly DumpFile[] {
    return this.#files;
  }
  /** The rule as shown before import. */
  get ruleText(): string {
    return this.#rule.rule ? `${this.#rule.rule.name} on the file's path` : DEFAULT_STEP_RULE_TEXT;
  }
  get ruleError(): string | null {
    return this.#rule.error;
  }
  get preview(): readonly StepPreview[] {
    return this.#preview;
  }
  /** Why the files cannot be imported yet, or null. */
  get blocker(): string | null {
    if (!this.#s.datasetId) return 'Choose the dataset the training run was evaluated on.';
    if (this.#files.length === 0) return "Choose the training run's step files or their folder.";
    if (this.#rule.error) return this.#rule.error;
    if (!this.#s.name.trim()) return 'Give the training run a name.';
    return this.configBlocker;
  }
  /** What keeps a folder from being followed (no files needed: they come as the run writes them). */
  get watchBlocker(): string | null {
    if (!this.#s.datasetId) return 'Choose the dataset the training run is evaluated on.';
    if (this.#rule.error) return this.#rule.error;
    return this.configBlocker;
  }

  chooseDataset(datasets: readonly DatasetRecord[], id: string | null): void {
    this.#s.datasetId = datasets.some((d) => d.id === id) ? id : (datasets[0]?.id ?? null);
  }
  setName(name: string): void {
    this.#s.name = name;
    this.#nameTouched = true;
  }
  setStepPattern(p: string): void {
    this.#s.stepPattern = p;
  }
  setFormat(f: HarnessFormat | null): void {
    this.#s.format = f;
  }
  /** The files of a picked folder (or loose files): dumps only, hidden ones left out, in name order. */
  setFiles(picked: readonly PickedFile[]): void {
    const keep = picked.filter(
      (p) => SERIES_FOLDER_FILE.test(p.path) && !p.path.split('/').some((s) => s.startsWith('.')),
    );
    this.#s.skipped = picked.length - keep.length;
    this.#files = keep
      .map((p) => ({ name: p.path, file: p.file, lastModified: p.file.lastModified || null }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (!this.#nameTouched) {
      const top = keep[0]?.path.split('/');
      this.#s.name = top && top.length > 1 ? top[0]! : (keep[0]?.file.name.replace(/\.[^.]+$/, '') ?? '');
    }
  }
  /** The folder's name names the series, unless the user gave one. */
  nameAfter(folder: string): void {
    if (!this.#nameTouched || !this.#s.name.trim()) this.#s.name = folder;
  }

  toRequest(): DumpImportRequest | null {
    if (this.blocker) return null;
    return {
      name: this.#s.name.trim(),
      datasetId: this.#s.datasetId!,
      config: this.toConfig(),
      stepPattern: this.#s.stepPattern.trim() || null,
      format: this.#s.format,
      files: [...this.#files],
    };
  }

  /** After an import: the files go, the settings stay for the next one. */
  clearFiles(): void {
    this.#files = [];
    this.#s.skipped = 0;
    this.#nameTouched = false;
    this.#s.name = '';
  }
}

/** The grouping form's own fields (the picked runs' steps are `$state.raw`, apart). */
interface SeriesGroupFields {
  datasetId: string | null;
  name: string;
}

/** Stored runs grouped by hand: the runs of one dataset, each with the step it stands for. */
export class SeriesGroupDraft {
  #s = $state<SeriesGroupFields>({
    datasetId: null,
    name: '',
  });
  /** runId -> step text as typed. */
  #steps = $state.raw<Record<string, string>>({});

  /** What the form shows of its fields, read-only: the methods below change them. */
  get state(): Readonly<SeriesGroupFields> {
    return this.#s;
  }
  /** The step typed for a run ('' when the run is not picked). */
  stepOf(runId: string): string {
    return this.#steps[runId] ?? '';
  }
  isPicked(runId: string): boolean {
    return runId in this.#steps;
  }
  get picked(): number {
    return Object.keys(this.#steps).length;
  }

  chooseDataset(id: string | null): void {
    if (id !== this.#s.datasetId) this.#steps = {};
    this.#s.datasetId = id;
  }
  setName(name: string): void {
    this.#s.name = name;
  }
  /** Picks a run (its step guessed from its name, else the next free number) or drops it. */
  togglePick(run: RunHeader, on: boolean): void {
    const next = { ...this.#steps };
    if (!on) delete next[run.id];
    else {
      const used = new Set(Object.values(next).map(Number));
      let guess =
        stepFromName(run.name)?.step ??
        stepFromName(run.source.kind === 'replay' ? run.source.predictions.name : '')?.step;
      if (guess === undefined || used.has(guess)) {
        guess = 1;
        while (used.has(guess)) guess++;
      }
      next[run.id] = String(guess);
    }
    this.#steps = next;
  }
  setStep(runId: string, step: string): void {
    if (runId in this.#steps) this.#steps = { ...this.#steps, [runId]: step };
  }

  get blocker(): string | null {
    const entries = Object.entries(this.#steps);
    if (entries.length === 0) return 'Pick the runs that make the training run.';
    const bad = entries.find(([, s]) => !/^\d+$/.test(s.trim()));
    if (bad) return `Give every picked run a whole number as its step ("${bad[1]}" is not one).`;
    const steps = entries.map(([, s]) => Number(s));
    if (new Set(steps).size !== steps.length) return 'Give each run its own step.';
    if (!this.#s.name.trim()) return 'Give the training run a name.';
    return null;
  }

  toRequest(): GroupRunsRequest | null {
    if (this.blocker) return null;
    return {
      name: this.#s.name.trim(),
      steps: Object.entries(this.#steps).map(([runId, s]) => ({ runId, step: Number(s) })),
    };
  }

  clear(): void {
    this.#steps = {};
    this.#s.name = '';
  }
}
