/**
 * The import form before it is sent: the files picked or dropped, the kind and name of the
 * dataset, and which file is the questions and which the gold (guessed from the paths the way
 * the importer does, and changeable). Only paths are looked at here; no file is read.
 */
import { classifyFiles } from '../../adapters/import/classify-files.ts';
import type { ImportSource } from '../../adapters/store/workbench-store.ts';
import { errorMessage } from '../../core/errors.ts';
import type { PickedFile } from './file-sources.ts';

export type DatasetKind = ImportSource['kind'];

const JSON_FILE = /\.jsonl?$/i;
const SQL_FILE = /\.sql$/i;
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
  #questionCandidates = $derived(this.#paths.filter((p) => JSON_FILE.test(p)));
  #goldCandidates = $derived(this.#paths.filter((p) => SQL_FILE.test(p)));
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
  get totalBytes(): number {
    return this.#totalBytes;
  }
  get ready(): boolean {
    return this.#files.length > 0 && this.#name.trim() !== '' && (this.#hasZip || (this.#guess !== null && this.#guess.error === null));
  }

  setFiles(files: PickedFile[]): void {
    this.#files = files;
    this.#questionsPath = '';
    this.#goldPath = '';
    if (files.length > 0) this.#name = guessName(files);
  }
  setKind(kind: DatasetKind): void {
    this.#kind = kind;
  }
  setName(name: string): void {
    this.#name = name;
  }
  setQuestionsPath(path: string): void {
    this.#questionsPath = path;
  }
  setGoldPath(path: string): void {
    this.#goldPath = path;
  }
  clear(): void {
    this.#files = [];
    this.#name = '';
    this.#questionsPath = '';
    this.#goldPath = '';
  }

  toSource(): ImportSource {
    const source: ImportSource = { kind: this.#kind, name: this.#name.trim(), files: this.#files.map((f) => ({ path: f.path, file: f.file })) };
    if (this.#questionsPath) source.questionsPath = this.#questionsPath;
    if (this.#goldPath) source.goldPath = this.#goldPath;
    return source;
  }
}
