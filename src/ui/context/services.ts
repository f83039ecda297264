/** What the workbench screens get from the composition root (main.ts). */
import type { SeriesAnalysisPort, WorkbenchStore } from '../../app/store-ports.ts';
import type { PreviewService } from '../../app/preview-service.ts';
import type { ProbeService } from '../../app/probe-service.ts';
import type { EngineFactory } from '../../app/engine-ports.ts';
import type { LabelRepository, RarRepository, RubricRepository } from '../../app/rubric-ports.ts';
import type { RubricRunService } from '../../app/rubric-run-service.ts';
import type { PlaygroundService } from '../../app/playground-service.ts';
import type { ParquetBlobWriter } from './parquet-export.ts';
import type { FolderPort } from '../../app/ports.ts';
import type { SeriesService } from '../../app/series-service.ts';

/** A folder's read permission, as the browser reports it. */
type FolderPermission = 'granted' | 'denied' | 'prompt';

/**
 * What the series screens need of folders (the browser: File System Access directories,
 * adapters/browser/directory-folder.ts), handed in by the composition root.
 */
interface FolderAccess {
  /** Whether this browser has a folder picker. */
  canPick(): boolean;
  /** The folder chosen in the picker; null when the user closed it. */
  pick(): Promise<FileSystemDirectoryHandle | null>;
  /** The permission to read a folder, without asking. */
  permission(handle: FileSystemDirectoryHandle): Promise<FolderPermission>;
  /** Asks for the permission to read a folder (needs a click). */
  ask(handle: FileSystemDirectoryHandle): Promise<FolderPermission>;
  open(handle: FileSystemDirectoryHandle): FolderPort;
}

/** What the series screens get from the composition root. */
export interface SeriesServices {
  service: SeriesService;
  analysis: SeriesAnalysisPort;
  folders: FolderAccess;
}

/** "Export report" (src/ui/workbench/report-export.ts builds it). */
export interface ReportExporter {
  /**
   * Builds and downloads the report of stored runs: the first is the report's run, the others
   * (if any) are compared with it. Resolves with an error message to show, or null.
   */
  download(runIds: readonly string[]): Promise<string | null>;
  /**
   * Builds and downloads the report of a stored training run: the series with every step, and
   * its last step's run as the report's run (dashboard, items, RL view). Resolves with an error
   * message to show, or null.
   */
  downloadSeries(seriesId: string): Promise<string | null>;
}

export interface RubricRepositories {
  rubrics: RubricRepository;
  rar: RarRepository;
  /** RaR-style rubric runs over `rar`, judged with `rubrics`' judge cache. */
  rarRuns: RubricRunService;
  /** Human labels of rubric runs and each labeller's place. */
  labels: LabelRepository;
}

/** Everything the screens use, built once by the composition root (src/ui/main.ts). */
export interface WorkbenchServices {
  store: WorkbenchStore;
  previews: PreviewService;
  /** The reward playground's one-worker executor over a dataset's stored databases. */
  playground: PlaygroundService;
  /** The reward-hacking probe over stored databases. */
  probe: ProbeService;
  /** The engines a policy or a judge can load. */
  engines: EngineFactory;
  /** The repositories over the page's one connection to the rubrics database (rubrics, judge caches, RaR runs) and the RaR run service over them, opened on first use. */
  rubricRepositories: () => Promise<RubricRepositories>;
  /** Training runs: the series service, its analysis in the worker, and folder access (File System Access API). */
  series: SeriesServices;
  /** A file of the embedded demo (public/demo), by its path under `demo/`, e.g. `gold.sql`. */
  fetchDemoFile(path: string): Promise<Blob>;
  /** Writes the Parquet downloads (a run's samples, its per-prompt statistics). */
  parquetBlob: ParquetBlobWriter;
  /** "Export report": stored runs as one offline HTML file (docs/report.md); absent in the report itself. */
  reports?: ReportExporter;
  /**
   * True in an offline report (docs/report.md): it carries no databases, so nothing that runs SQL
   * (the playground, the probe) is offered there.
   */
  readOnlyReport?: boolean;
}
