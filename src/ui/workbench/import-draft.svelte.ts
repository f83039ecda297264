/**
 * The import form before it is sent: the files picked or dropped, the kind and name of the
 * dataset, and which file is the questions and which the gold (guessed from the paths the way
 * the importer does, and changeable). Only paths are looked at here; no file is read.
 */
import { classifyFiles, normalizePath } from '../../core/import/classify-files.ts';
import {
  databaseDirs,
  detectLayout,
  isGoldCandidate,
  isQuestionCandidate,
  missingDatabases,
  type LayoutGuess,
} from '../../core/import/layout.ts';
import type { ImportSource } from '../../app/store-ports.ts';
import { errorMessage } from '../../core/errors.ts';
import type { PickedFile } from './file-sources.ts';

export type DatasetKind = ImportSource['kind'];

const ZIP_FILE = /\.zip$/i;
const JUNK = /(^|\/)(__MACOSX\/|\._|\.DS_Store$)/;

function guessName(files: readonly PickedFile[]): string {
  const first = files[0]?.path ?? '';
  const top = first.includes('/') ? first.slice(0, first.indexOf('/')) : first.replace(/\.[^.]*$/, '');
  return top || 'dataset';
}

/** The import form's own fields (the picked files and the missing databases are `$state.raw`, apart). */
interface ImportDraftFields {
  kind: DatasetKind;
  name: string;
  /** '' = the importer's own choice. */
  questionsPath: string;
  /** '' = the importer's own choice (without a gold file, the questions' own SQL is the gold). */
  goldPath: string;
}

export class ImportDraft {
  #files = $state.raw<PickedFile[]>([]);
  #s = $state<ImportDraftFields>({
    kind: 'bird',
    name: '',
    questionsPath: '',
    goldPath: '',
  });

  #paths = $derived(this.#files.map((f) => f.path).filter((p) => !JUNK.test(p)));
  #hasZip = $derived(this.#paths.some((p) => ZIP_FILE.test(p)));
  #layout = $derived(detectLayout(this.#paths));
  /** Files that can be the questions: no schema (`dev_tables.json`), prediction or database file, each path once. */
  #questionCandidates = $derived.by(() => {
    const dirs = databaseDirs(this.#paths);
    return [...new Set(this.#paths.filter((p) => isQuestionCandidate(p, dirs)))];
  });
  #goldCandidates = $derived([...new Set(this.#paths.filter(isGoldCandidate))]);
  /** Databases the questions use that are not among the files (read from the questions file), or null until known. */
  #missing = $state.raw<{ dbId: string; questions: number }[] | null>(null);
  /** Plain field: only the latest check writes `#missing`. */
  #check = 0;
  #guess = $derived.by(() => {
    if (this.#files.length === 0 || this.#hasZip) return null;
    try {
      const c = classifyFiles(this.#paths, {
        questionsPath: this.#s.questionsPath || undefined,
        goldPath: this.#s.goldPath || undefined,
      });
      return { questions: c.questions, gold: c.gold, databases: [...c.databases.keys()].sort(), error: null };
    } catch (err) {
      return { questions: null, gold: null, databases: [], error: errorMessage(err) };
    }
  });
  #totalBytes = $derived(this.#files.reduce((n, f) => n + f.file.size, 0));

  get files(): readonly PickedFile[] {
    return this.#files;
  }
  /** What the form shows of its fields, read-only: the methods below change them. */
  get state(): Readonly<ImportDraftFields> {
    return this.#s;
  }
  get hasZip(): boolean {
    return this.#hasZip;
  }
  get questionCandidates(): readonly string[] {
    return this.#questionCandidates;
  }
  get goldCandidates(): readonly string[] {
    return this.#goldCandidates;
  }
  /** What the importer will take, or why it cannot decide (null for a zip: read in the worker). */
  get guess(): { questions: string | null; gold: string | null; databases: string[]; error: string | null } | null {
    return this.#guess;
  }
  /** The benchmark the folder's layout shows (BIRD, Spider, KaggleDBQA), or none. */
  get layout(): LayoutGuess {
    return this.#layout;
  }
  get missingDatabases(): readonly { dbId: string; questions: number }[] | null {
    return this.#missing;
  }
  get totalBytes(): number {
    return this.#totalBytes;
  }
  get ready(): boolean {
    return (
      this.#files.length > 0 &&
      this.#s.name.trim() !== '' &&
      (this.#hasZip || (this.#guess !== null && this.#guess.error === null))
    );
  }

  setFiles(files: PickedFile[]): void {
    this.#files = files;
    this.#s.questionsPath = '';
    this.#s.goldPath = '';
    if (files.length > 0) this.#s.name = guessName(files);
    // A recognised layout sets the kind (a Spider folder is not "BIRD"); the user may still change it.
    if (this.#layout.layout) this.#s.kind = this.#layout.kind;
    void this.#checkDatabases();
  }

  /** Reads the chosen questions file for its databases and names those not among the files, before anything is stored. */
  async #checkDatabases(): Promise<void> {
    const check = ++this.#check;
    this.#missing = null;
    const guess = this.#guess;
    const path = guess?.questions;
    if (!guess || !path || guess.error || !/\.jsonl?$/i.test(path)) return;
    const file = this.#files.find((f) => normalizePath(f.path) === path)?.file;
    if (!file) return;
    const missing = missingDatabases(await file.text(), new Set(guess.databases));
    if (check === this.#check) this.#missing = missing;
  }
  setKind(kind: DatasetKind): void {
    this.#s.kind = kind;
  }
  setName(name: string): void {
    this.#s.name = name;
  }
  setQuestionsPath(path: string): void {
    this.#s.questionsPath = path;
    void this.#checkDatabases();
  }
  setGoldPath(path: string): void {
    this.#s.goldPath = path;
  }
  clear(): void {
    this.#check++;
    this.#missing = null;
    this.#files = [];
    this.#s.name = '';
    this.#s.questionsPath = '';
    this.#s.goldPath = '';
  }

  toSource(): ImportSource {
    const source: ImportSource = {
      kind: this.#s.kind,
      name: this.#s.name.trim(),
      files: this.#files.map((f) => ({ path: f.path, file: f.file })),
    };
    if (this.#s.questionsPath) source.questionsPath = this.#s.questionsPath;
    if (this.#s.goldPath) source.goldPath = this.#s.goldPath;
    return source;
  }
}
