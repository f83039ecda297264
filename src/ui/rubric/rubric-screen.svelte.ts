/**
 * The rubric screen's state: the stored rubrics (own IndexedDB database, see
 * adapters/judge/idb-judge-cache.ts), the built-in ones, the rubric being edited, and the scoring.
 */
import { ReferenceDraftState } from './draft-from-reference.svelte.ts';
import type { RubricRepository, StoredRubric } from '../../app/rubric-ports.ts';
import type { RubricRepositories } from '../context/services.ts';
import type { EngineFactory } from '../../app/engine-ports.ts';
import type { WorkbenchStore } from '../../app/store-ports.ts';
import { errorMessage } from '../../core/errors.ts';
import { BIRD_RUBRIC, EX_ONLY_RUBRIC } from '../../core/rubric/bird-rubric.ts';
import type { Rubric } from '../../core/rubric/model.ts';
import { RubricDraft } from './rubric-draft.svelte.ts';
import { ScoringState } from './rubric-scoring.svelte.ts';

export const BUILT_IN: readonly Rubric[] = [BIRD_RUBRIC, EX_ONLY_RUBRIC];

/** RubricsState's own fields (read through `state`). */
interface RubricsFields {
  message: string | null;
  error: string | null;
}

export class RubricsState {
  readonly draft = new RubricDraft(EX_ONLY_RUBRIC);
  readonly scoring: ScoringState;
  /** Drafting a rubric from a question and its reference with an engine. */
  readonly drafting: ReferenceDraftState;
  #stored = $state.raw<StoredRubric[]>([]);
  #s = $state<RubricsFields>({
    message: null,
    error: null,
  });
  #repo: Promise<RubricRepository> | null = null;

  constructor(
    store: WorkbenchStore,
    engines: EngineFactory,
    private readonly repositories: () => Promise<RubricRepositories>,
  ) {
    this.scoring = new ScoringState(store, () => this.repo(), engines);
    this.drafting = new ReferenceDraftState(() => this);
  }

  repo(): Promise<RubricRepository> {
    return (this.#repo ??= this.repositories().then((r) => r.rubrics));
  }

  async refresh(): Promise<void> {
    try {
      this.#stored = await (await this.repo()).list();
    } catch (err) {
      this.#s.error = `Stored rubrics could not be read: ${errorMessage(err)}`;
    }
  }

  open(rubric: Rubric): void {
    this.draft.load(rubric);
    this.#s.message = null;
    void this.scoring.show(rubric);
  }

  async save(): Promise<void> {
    const r = this.draft.result;
    if (!r.rubric) return;
    try {
      await (await this.repo()).save($state.snapshot(r.rubric) as Rubric);
      this.#s.message = `Saved rubric "${r.rubric.title}" (${r.rubric.items.length} criteria).`;
      this.#s.error = null;
      await this.refresh();
    } catch (err) {
      this.#s.error = `The rubric could not be saved: ${errorMessage(err)}`;
    }
  }

  async remove(id: string): Promise<void> {
    await (await this.repo()).remove(id);
    await this.refresh();
  }

  /** The fields the screen shows, read-only: the methods below change them. */
  get state(): Readonly<RubricsFields> {
    return this.#s;
  }
  /** The rubrics saved in this browser. */
  get stored(): StoredRubric[] {
    return this.#stored;
  }
}
