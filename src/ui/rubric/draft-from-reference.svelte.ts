/**
 * Drafting a rubric from a question and its reference answer with the judge engine of the
 * Rubrics screen (any engine of the app): the core's `draftRubric` asks it for 7–20 criteria;
 * a draft that parses opens in the rubric editor, one that does not is refused with the core's
 * reason and the raw answer kept for a look.
 */
import { errorMessage } from '../../core/errors.ts';
import { draftRubric } from '../../core/rubric/draft.ts';
import type { RubricsState } from './rubric-screen.svelte.ts';

interface DraftingFields {
  question: string;
  reference: string;
  running: boolean;
  error: string | null;
  message: string | null;
  /** The engine's last answer, as it came. */
  raw: string | null;
}

/** A rubric id from the question's first words: `drafted-why-is-the-sky`. */
function draftId(question: string): string {
  const words = question
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean)
    .slice(0, 5);
  return ['drafted', ...words].join('-');
}

export class ReferenceDraftState {
  #s = $state<DraftingFields>({ question: '', reference: '', running: false, error: null, message: null, raw: null });
  #abort: AbortController | null = null;

  constructor(private readonly screenOf: () => RubricsState) {}

  get state(): Readonly<DraftingFields> {
    return this.#s;
  }
  setQuestion(q: string): void {
    this.#s.question = q;
  }
  setReference(r: string): void {
    this.#s.reference = r;
  }
  cancel(): void {
    this.#abort?.abort();
  }

  async draft(): Promise<void> {
    if (this.#s.running) return;
    const screen = this.screenOf();
    const sc = screen.scoring;
    this.#s.error = null;
    this.#s.message = null;
    this.#s.raw = null;
    if (sc.state.judgeChoice === 'none') {
      this.#s.error = 'Choose an engine first: drafting uses the judge engine (the “drafting engine” select).';
      return;
    }
    this.#s.running = true;
    this.#abort = new AbortController();
    try {
      sc.judge.chooseEngineKind(sc.state.judgeChoice);
      const { engine } = await sc.judge.ensureLoaded('drafting engine');
      const question = this.#s.question;
      const title = question.trim().replace(/\s+/g, ' ');
      const got = await draftRubric({
        engine,
        input: { question, reference: this.#s.reference },
        id: draftId(question),
        title: `Drafted: ${title.length > 60 ? `${title.slice(0, 60)}…` : title}`,
        signal: this.#abort.signal,
      });
      this.#s.raw = got.raw;
      screen.open(got.rubric);
      this.#s.message = `Drafted ${got.rubric.items.length} criteria (prompt ${got.promptId}) into the rubric editor: read and edit them, then save.`;
    } catch (err) {
      const raw = (err as { raw?: string }).raw;
      if (typeof raw === 'string') this.#s.raw = raw;
      this.#s.error = errorMessage(err);
    } finally {
      this.#s.running = false;
      this.#abort = null;
    }
  }
}
