/**
 * The rubric being edited: a list of criteria as form fields (strings where the user types),
 * turned into a `Rubric` by the core's `validateRubric`, whose message is shown as it is.
 */
import { errorMessage } from '../../core/errors.ts';
import {
  defaultWeight,
  validateRubric,
  type Category,
  type Rubric,
  type RubricItem,
  type WeightingName,
} from '../../core/rubric/model.ts';
import type { SqlCheckName } from '../../core/rubric/sql-check-names.ts';

export type CheckKind = 'judge' | 'sql' | 'regex';

export interface DraftItem {
  /** For keyed lists only; not stored. */
  uid: number;
  id: string;
  title: string;
  description: string;
  category: Category;
  weight: string;
  kind: CheckKind;
  sqlName: SqlCheckName;
  expected: string;
  pattern: string;
  flags: string;
  target: 'completion' | 'sql';
}

let nextUid = 1;

function fromItem(item: RubricItem): DraftItem {
  const c = item.check;
  return {
    uid: nextUid++,
    id: item.id,
    title: item.title,
    description: item.description,
    category: item.category,
    weight: String(item.weight),
    kind: c.kind,
    sqlName: c.kind === 'sql' ? c.name : 'matches-gold',
    expected: c.kind === 'sql' && c.expected !== undefined ? String(c.expected) : '',
    pattern: c.kind === 'regex' ? c.pattern : '',
    flags: c.kind === 'regex' ? c.flags : '',
    target: c.kind === 'regex' ? c.target : 'sql',
  };
}

function toCheck(d: DraftItem): unknown {
  if (d.kind === 'judge') return { kind: 'judge' };
  if (d.kind === 'sql')
    return d.expected.trim() === ''
      ? { kind: 'sql', name: d.sqlName }
      : { kind: 'sql', name: d.sqlName, expected: Number(d.expected) };
  return { kind: 'regex', pattern: d.pattern, flags: d.flags, target: d.target };
}

/** A typed weight: a number when it reads as one, else the text (validation then names it). */
function weightValue(w: string): unknown {
  const t = w.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
}

/** The fields of a criterion the form edits one at a time (the category goes through `setCategory`: it moves the weight too). */
type EditableField = Exclude<keyof DraftItem, 'uid' | 'category'>;

/** RubricDraft's own fields (read through `state`). */
interface RubricDraftFields {
  id: string;
  title: string;
  weighting: WeightingName;
  items: DraftItem[];
}

export class RubricDraft {
  #s = $state<RubricDraftFields>({
    id: 'my-rubric',
    title: 'My rubric',
    weighting: 'paper',
    items: [],
  });

  /** The rubric or the core's validation message. */
  readonly result = $derived.by((): { rubric: Rubric; error: null } | { rubric: null; error: string } => {
    try {
      return { rubric: validateRubric(this.input(), { weighting: this.#s.weighting }), error: null };
    } catch (err) {
      return { rubric: null, error: errorMessage(err) };
    }
  });

  constructor(rubric?: Rubric) {
    if (rubric) this.load(rubric);
    else this.add();
  }

  /** The fields the screen shows, read-only: the methods below change them. */
  get state(): Readonly<Omit<RubricDraftFields, 'items'>> & { readonly items: readonly Readonly<DraftItem>[] } {
    return this.#s;
  }

  setId(id: string): void {
    this.#s.id = id;
  }
  setTitle(title: string): void {
    this.#s.title = title;
  }
  /** One field of one criterion, as typed. */
  editItem<K extends EditableField>(uid: number, field: K, value: DraftItem[K]): void {
    const d = this.#s.items.find((x) => x.uid === uid);
    if (d) d[field] = value;
  }

  input(): unknown {
    return {
      id: this.#s.id.trim(),
      title: this.#s.title,
      items: this.#s.items.map((d) => ({
        id: d.id.trim() === '' ? undefined : d.id.trim(),
        title: d.title,
        description: d.description,
        category: d.category,
        weight: weightValue(d.weight),
        check: toCheck(d),
      })),
    };
  }

  load(rubric: Rubric): void {
    this.#s.id = rubric.id;
    this.#s.title = rubric.title;
    this.#s.items = rubric.items.map(fromItem);
  }

  add(): void {
    const n = this.#s.items.length + 1;
    let id = `c${n}`;
    for (let k = n; this.#s.items.some((d) => d.id === id); k++) id = `c${k + 1}`;
    this.#s.items.push({
      uid: nextUid++,
      id,
      title: '',
      description: '',
      category: 'essential',
      weight: String(defaultWeight('essential', this.#s.weighting)),
      kind: 'judge',
      sqlName: 'matches-gold',
      expected: '',
      pattern: '',
      flags: '',
      target: 'sql',
    });
  }

  remove(uid: number): void {
    this.#s.items = this.#s.items.filter((d) => d.uid !== uid);
  }

  move(uid: number, step: -1 | 1): void {
    const i = this.#s.items.findIndex((d) => d.uid === uid);
    const j = i + step;
    if (i < 0 || j < 0 || j >= this.#s.items.length) return;
    const next = [...this.#s.items];
    [next[i], next[j]] = [next[j]!, next[i]!];
    this.#s.items = next;
  }

  /** A new category takes the preset's weight (a pitfall keeps the sign it had). */
  setCategory(uid: number, category: Category): void {
    const d = this.#s.items.find((x) => x.uid === uid);
    if (!d) return;
    const wasNegative = Number(d.weight) < 0;
    d.category = category;
    const w = Math.abs(defaultWeight(category, this.#s.weighting));
    d.weight = String(
      category === 'pitfall' && (wasNegative || defaultWeight('pitfall', this.#s.weighting) < 0) ? -w : w,
    );
  }

  /** Every weight from the preset (pitfalls keep their sign: it says how the item is phrased). */
  applyPreset(weighting: WeightingName): void {
    this.#s.weighting = weighting;
    for (const d of this.#s.items) {
      const w = Math.abs(defaultWeight(d.category, weighting));
      d.weight = String(d.category === 'pitfall' && Number(d.weight) < 0 ? -w : w);
    }
  }
}
