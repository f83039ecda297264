/**
 * The Training runs screen's state, one for the page's life (an import or a followed folder goes
 * on while the user looks elsewhere): the stored series, the forms, the import under way with
 * its progress and notes, and the folders followed. A followed folder is polled while the page
 * is open; its handle is stored, so after a reload it is followed again at once where the
 * browser kept the permission, and after a click (`allowFolder`) where it did not.
 */
import { errorMessage, isCancellation } from '../../core/errors.ts';
import type { SeriesProgress, SeriesRecord } from '../../app/records.ts';
import type { SeriesServices } from '../context/services.ts';
import { SeriesDraft, SeriesGroupDraft } from './series-drafts.svelte.ts';

interface SeriesJob {
  kind: 'import' | 'file' | 'group';
  /** The series being made (once created). */
  name: string;
  progress: SeriesProgress | null;
}

interface FollowStatus {
  folder: string;
  /** `following`: polled now; `permission`: the browser asks again (a click); `stopped`; `failed`. */
  state: 'following' | 'permission' | 'stopped' | 'failed';
  progress: SeriesProgress | null;
  notes: string[];
  error: string | null;
}

/** Poll interval of a followed folder. */
export const FOLLOW_POLL_MS = 2000;
/** Notes kept per followed folder (the newest). */
const NOTES_KEPT = 50;

/** The Training runs page's own fields (the list, the job, notes, versions and follows are `$state.raw`, apart). */
interface SeriesFields {
  loaded: boolean;
  error: string | null;
  jobError: string | null;
  /** The last import's outcome in a sentence. */
  message: string | null;
}

export class SeriesState {
  readonly #services: SeriesServices;
  readonly #runsChanged: () => void;
  readonly draft = new SeriesDraft();
  readonly group = new SeriesGroupDraft();
  #list = $state.raw<SeriesRecord[]>([]);
  #s = $state<SeriesFields>({
    loaded: false,
    error: null,
    jobError: null,
    message: null,
  });
  #job = $state.raw<SeriesJob | null>(null);
  #notes = $state.raw<string[]>([]);
  /** Bumped when a series gains a step or changes: its view reloads. */
  #versions = $state.raw<Record<string, number>>({});
  #follows = $state.raw<Record<string, FollowStatus>>({});
  #abort: AbortController | null = null;
  readonly #followAborts = new Map<string, AbortController>();
  #resumed = false;

  constructor(services: SeriesServices, runsChanged: () => void) {
    this.#services = services;
    this.#runsChanged = runsChanged;
  }

  get list(): readonly SeriesRecord[] {
    return this.#list;
  }
  /** What the screen shows of these fields, read-only: the methods below change them. */
  get state(): Readonly<SeriesFields> {
    return this.#s;
  }
  get job(): SeriesJob | null {
    return this.#job;
  }
  /** How the last import's steps were found, mapping reports, pairing findings. */
  get notes(): readonly string[] {
    return this.#notes;
  }
  get canPickFolder(): boolean {
    return this.#services.folders.canPick();
  }
  /** Changes whenever the series gains a step (its view reloads). */
  version(seriesId: string): number {
    return this.#versions[seriesId] ?? 0;
  }
  follow(seriesId: string): FollowStatus | null {
    return this.#follows[seriesId] ?? null;
  }

  async refresh(): Promise<void> {
    try {
      this.#list = await this.#services.service.list();
      this.#s.error = null;
    } catch (err) {
      this.#s.error = `The training runs could not be read: ${errorMessage(err)}`;
    } finally {
      this.#s.loaded = true;
    }
  }

  /** Something stored with the series changed (its exclusions): its view and its steps' views are computed again. */
  touched(seriesId: string): void {
    this.#changed(seriesId);
  }

  #changed(seriesId: string): void {
    this.#versions = { ...this.#versions, [seriesId]: this.version(seriesId) + 1 };
    this.#runsChanged();
    void this.refresh();
  }

  async #run<T>(job: SeriesJob, body: (signal: AbortSignal) => Promise<T>): Promise<T | null> {
    this.#abort?.abort();
    const abort = new AbortController();
    this.#abort = abort;
    this.#job = job;
    this.#s.jobError = null;
    this.#s.message = null;
    this.#notes = [];
    try {
      return await body(abort.signal);
    } catch (err) {
      if (!isCancellation(err)) this.#s.jobError = errorMessage(err);
      return null;
    } finally {
      if (this.#abort === abort) {
        this.#abort = null;
        this.#job = null;
      }
      this.#runsChanged();
      void this.refresh();
    }
  }

  /** A new series from the draft's files; resolves with it (null when refused or cancelled). */
  async importDumps(): Promise<SeriesRecord | null> {
    const req = this.draft.toRequest();
    if (!req) return null;
    const notes: string[] = [];
    const done = await this.#run({ kind: 'import', name: req.name, progress: null }, (signal) =>
      this.#services.service.importDumps(req, {
        signal,
        onProgress: (p) => (this.#job = { kind: 'import', name: req.name, progress: p }),
        onNote: (n) => {
          notes.push(n);
          this.#notes = [...notes];
        },
      }),
    );
    this.#notes = notes;
    if (done) {
      this.#s.message = `Training run "${done.name}": ${done.steps.length} step${done.steps.length === 1 ? '' : 's'} evaluated and stored.`;
      this.draft.clearFiles();
    }
    return done;
  }

  /** A series file (from the CLI's --series-out or another browser's export). */
  async importFile(file: File): Promise<SeriesRecord | null> {
    const done = await this.#run({ kind: 'file', name: file.name, progress: null }, () =>
      this.#services.service.importSeriesFile(file, file.name),
    );
    if (done) this.#s.message = `Imported training run "${done.name}" (${done.steps.length} steps).`;
    return done;
  }

  async groupRuns(): Promise<SeriesRecord | null> {
    const req = this.group.toRequest();
    if (!req) return null;
    const done = await this.#run({ kind: 'group', name: req.name, progress: null }, () =>
      this.#services.service.groupRuns(req),
    );
    if (done) {
      this.#s.message = `Training run "${done.name}" made of ${done.steps.length} stored runs.`;
      this.group.clear();
    }
    return done;
  }

  /** Stops the import under way (the step being evaluated is not stored). */
  cancel(): void {
    this.#abort?.abort();
  }

  async rename(seriesId: string, name: string): Promise<void> {
    await this.#services.service.rename(seriesId, name);
    this.#changed(seriesId);
  }

  async delete(seriesId: string): Promise<void> {
    this.stopFollowing(seriesId);
    try {
      await this.#services.service.delete(seriesId);
    } catch (err) {
      this.#s.error = `The training run could not be deleted: ${errorMessage(err)}`;
    }
    this.#changed(seriesId);
  }

  /**
   * Chooses a folder (the browser's picker), makes a series that follows it and starts polling:
   * the files already there and every new one are evaluated as they become stable.
   */
  async watchFolder(): Promise<SeriesRecord | null> {
    const d = this.draft;
    if (d.watchBlocker) return null;
    this.#s.jobError = null;
    try {
      const handle = await this.#services.folders.pick();
      if (!handle) return null;
      d.nameAfter(handle.name);
      const series = await this.#services.service.createFollowed(
        {
          name: d.state.name.trim() || handle.name,
          datasetId: d.state.datasetId!,
          config: d.toConfig(),
          stepPattern: d.state.stepPattern.trim() || null,
        },
        handle,
      );
      await this.refresh();
      this.#start(series.id, handle);
      return series;
    } catch (err) {
      if (!isCancellation(err)) this.#s.jobError = errorMessage(err);
      return null;
    }
  }

  #setFollow(seriesId: string, patch: Partial<FollowStatus> & { folder?: string }): void {
    const had = this.#follows[seriesId] ?? { folder: '', state: 'stopped', progress: null, notes: [], error: null };
    this.#follows = { ...this.#follows, [seriesId]: { ...had, ...patch } };
  }

  #start(seriesId: string, handle: FileSystemDirectoryHandle): void {
    if (this.#followAborts.has(seriesId)) return;
    const abort = new AbortController();
    this.#followAborts.set(seriesId, abort);
    this.#setFollow(seriesId, { folder: handle.name, state: 'following', error: null });
    let added = 0;
    void this.#services.service
      .follow(seriesId, this.#services.folders.open(handle), {
        pollMs: FOLLOW_POLL_MS,
        signal: abort.signal,
        onProgress: (p) => {
          this.#setFollow(seriesId, { progress: p });
          if (p.added > added) {
            added = p.added;
            this.#changed(seriesId);
          }
        },
        onNote: (n) =>
          this.#setFollow(seriesId, { notes: [...(this.#follows[seriesId]?.notes ?? []), n].slice(-NOTES_KEPT) }),
      })
      .then(
        () => this.#setFollow(seriesId, { state: 'stopped', progress: null }),
        (err: unknown) => this.#setFollow(seriesId, { state: 'failed', progress: null, error: errorMessage(err) }),
      )
      .finally(() => {
        if (this.#followAborts.get(seriesId) === abort) this.#followAborts.delete(seriesId);
      });
  }

  stopFollowing(seriesId: string): void {
    this.#followAborts.get(seriesId)?.abort();
  }

  /** Follows again a folder that was stopped (or whose permission the browser kept). */
  async resumeFollowing(seriesId: string): Promise<void> {
    const folder = await this.#services.service.folder(seriesId);
    if (!folder) return;
    const state = await this.#services.folders.permission(folder.handle);
    if (state === 'granted') this.#start(seriesId, folder.handle);
    else this.#setFollow(seriesId, { folder: folder.name, state: 'permission' });
  }

  /** Asks the browser for the folder again (a click), then follows it. */
  async allowFolder(seriesId: string): Promise<void> {
    const folder = await this.#services.service.folder(seriesId);
    if (!folder) return;
    try {
      const state = await this.#services.folders.ask(folder.handle);
      if (state === 'granted') this.#start(seriesId, folder.handle);
      else
        this.#setFollow(seriesId, {
          folder: folder.name,
          state: 'permission',
          error: 'The browser did not allow reading the folder.',
        });
    } catch (err) {
      this.#setFollow(seriesId, { folder: folder.name, state: 'permission', error: errorMessage(err) });
    }
  }

  /** Once per page: the series and the folders they follow (followed again where the permission was kept). */
  async start(): Promise<void> {
    await this.refresh();
    if (this.#resumed) return;
    this.#resumed = true;
    for (const s of this.#list) {
      if (s.origin !== 'folder') continue;
      await this.resumeFollowing(s.id).catch((err: unknown) =>
        this.#setFollow(s.id, { state: 'failed', error: errorMessage(err) }),
      );
    }
  }
}
