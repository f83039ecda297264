/**
 * The import form before it is sent: the files picked or dropped, the kind and name of the
 * dataset, and which file is the questions and which the gold (guessed from the paths the way
 * the importer does, and changeable). Only paths are looked at here; no file is read.
 */
import { classifyFiles, normalizePath } from '../../adapters/import/classify-files.ts';
import {
  databaseDirs,
  detectLayout,
  isGoldCandidate,
  isQuestionCandidate,
  missingDatabases,
  type LayoutGuess,
} from '../../adapters/import/layout.ts';
import type { ImportSource } from '../../adapters/store/workbench-store.ts';
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

export class ImportDraft {
  #files = $state.raw<PickedFile[]>([]);
  #kind = $state<DatasetKind>('bird');
  #name = $state('');
  /** '' = the importer's own choice. */
  #questionsPath = $state('');
  /** '' = the importer's own choice (without a gold file, the questions' own SQL is the gold). */
  #goldPath = $state('');

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
        questionsPath: this.#questionsPath || undefined,
        goldPath: this.#goldPath || undefined,
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
  get kind(): DatasetKind {
    return this.#kind;
  }
  get name(): string {
    return this.#name;
  }
  get questionsPath(): string {
    return this.#questionsPath;
  }
  get goldPath(): string {
    return this.#goldPath;
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
      this.#name.trim() !== '' &&
      (this.#hasZip || (this.#guess !== null && this.#guess.error === null))
    );
  }

  setFiles(files: PickedFile[]): void {
    this.#files = files;
    this.#questionsPath = '';
    this.#goldPath = '';
    if (files.length > 0) this.#name = guessName(files);
    // A recognised layout sets the kind (a Spider folder is not "BIRD"); the user may still change it.
    if (this.#layout.layout) this.#kind = this.#layout.kind;
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
    this.#kind = kind;
  }
  setName(name: string): void {
    this.#name = name;
  }
  setQuestionsPath(path: string): void {
    this.#questionsPath = path;
    void this.#checkDatabases();
  }
  setGoldPath(path: string): void {
    this.#goldPath = path;
  }
  clear(): void {
    this.#check++;
    this.#missing = null;
    this.#files = [];
    this.#name = '';
    this.#questionsPath = '';
    this.#goldPath = '';
  }

  toSource(): ImportSource {
    const source: ImportSource = {
      kind: this.#kind,
      name: this.#name.trim(),
      files: this.#files.map((f) => ({ path: f.path, file: f.file })),
    };
    if (this.#questionsPath) source.questionsPath = this.#questionsPath;
    if (this.#goldPath) source.goldPath = this.#goldPath;
    return source;
  }
}
