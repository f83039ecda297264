/**
 * What the CLI's commands need from Node beyond the core: the ports the Node adapters implement.
 * The commands take a `NodeHost` and never import `src/adapters`; the one host is built by
 * `createNodeHost()` (src/adapters/node/node-host.ts) and handed to each command by the
 * composition root, src/cli/main.ts (the only CLI file that imports adapters). Tests that call
 * a command's functions directly build the same real host with `createNodeHost()`.
 */
import type { DbSource } from '../app/ports.ts';
import type { Engine, EngineDevice } from '../core/engine/engine.ts';
import type { ProbeResult } from '../core/episode/types.ts';
import type { SqlExecutor } from '../core/eval/executor.ts';
import type { HarnessFormat, HarnessRow } from '../core/formats/harness.ts';
import type { SourceRecord } from '../core/formats/records.ts';
import type { ReadOnlyQuery } from '../core/prompt/omnisql-schema.ts';
import type { SchemaSource } from '../core/prompt/schema-source.ts';
import type { GzipPort } from '../core/report/report-file.ts';
import type { JudgeCache } from '../core/rubric/judge-cache.ts';
import type { CachedFacts, VerdictStore } from '../core/run/verdict-cache.ts';
import type { TableSchema } from '../core/views/tables.ts';
import type { SeriesDump } from '../core/series/dump-step.ts';
import type { StepRule } from '../core/series/step-name.ts';
import type { Question } from '../core/types.ts';

/** A pool of SQL workers over the databases of a folder: the run's executor and its probes. */
interface NodeSqlPool extends SqlExecutor {
  /** One read-only statement in a worker of the pool's own, with the isolation a prediction gets. */
  probe(dbId: string, sql: string, options: { timeoutMs: number }): Promise<ProbeResult>;
  /** Starts the workers now (sql.js compiles while the inputs are read). */
  warm(): void;
}

/** The schema of a folder's databases, read by one SQL worker of its own. */
interface SchemaReader {
  /** Tables, columns, sample rows (and BIRD's column descriptions when asked for). */
  source: SchemaSource;
  /** One read-only query on a database (loaded into the worker when it is not yet). */
  query: ReadOnlyQuery;
  /** Stops the worker. */
  dispose(): void;
}

/** The verdict cache's file: verdicts, and each database's facts for the version scan. */
interface VerdictCacheFile extends VerdictStore {
  readonly file: string;
  /** Verdicts held (facts not counted). */
  readonly entries: number;
  facts(key: string): CachedFacts | undefined;
  setFacts(key: string, facts: CachedFacts): void;
  save(): Promise<void>;
}

/** The options of an OpenAI-compatible engine (src/adapters/engines/openai-engine.ts) that the CLI sets. */
interface OpenAiEngineFlags {
  baseUrl: string;
  model?: string;
  apiKey?: string | null;
  concurrency?: number;
  maxRetries?: number;
  timeoutMs?: number;
}

/** An engine that says which device ran the model (an OpenAI-compatible server does). */
type NodeEngine = Engine & { device(): EngineDevice | null };

export interface NodeHost {
  /** SQL workers (worker_threads) over `<db-root>/<db_id>/<db_id>.sqlite`. */
  sql: {
    /** `engine: 'legacy'`: sql.js 1.8.0 (SQLite 3.39), the version check's older generation. */
    pool(options: { dbRoot: string; workers: number; engine?: 'legacy' }): NodeSqlPool;
    /** The databases of a folder as the SQL workers read them. */
    folder(dbRoot: string): DbSource;
    /** `descriptions`: read BIRD's `database_description/*.csv` beside each database too. */
    openSchemaReader(dbRoot: string, options: { descriptions: boolean }): Promise<SchemaReader>;
    /**
     * The sha256 of a database file's bytes as they are now; null when they would not be read
     * alone (a `-wal` with committed frames, a hot journal) or at all.
     */
    dbFileSha256(dbId: string, file: string): Promise<string | null>;
    /** Why a db_id cannot name a folder's database (a path separator, `..`), or null. */
    unsafeDbId(dbId: string): string | null;
  };
  /**
   * Inflates the databases of a zip (`--db-root dev.zip`) into `dir`, a folder the caller owns,
   * in the `<db>/<db>.sqlite` layout; returns how many. Refused: a zip beyond the import's bounds,
   * a database twice with different bytes, one with a `-wal` or hot journal, none at all.
   */
  extractZipDatabases(zipFile: string, dir: string): Promise<number>;
  /** The verdict cache kept in a folder (`eval --cache DIR`). */
  verdictCache: {
    /** `$XDG_CACHE_HOME/rlvr-workbench`, else `~/.cache/rlvr-workbench`. */
    defaultDir(): string;
    open(dir: string, options: { warn: (msg: string) => void }): Promise<VerdictCacheFile>;
  };
  parquet: {
    /** Every record of a Parquet file; a missing file is named with `flag`. */
    read(
      flag: string,
      file: string,
    ): Promise<{ name: string; records: SourceRecord[]; bytes: number; keyValue: Record<string, string> }>;
    /** Writes the rows as one Parquet file; returns the bytes written. */
    write<R>(
      file: string,
      table: TableSchema<R>,
      rows: readonly R[],
      opts?: { metadata?: Record<string, string> },
    ): Promise<number>;
  };
  /**
   * One file of a training run as the steps of a series (a trainer's or harness's dump, or a
   * predictions file named by its step): src/adapters/harness/series-dump.ts.
   */
  readSeriesDump(
    name: string,
    blob: Blob,
    questions: readonly Question[],
    options: {
      format?: HarnessFormat | null;
      rule?: StepRule;
      sibling?: (fileName: string) => Promise<Blob | null>;
    },
  ): Promise<SeriesDump>;
  /** The rows of one dump of verl, lm-evaluation-harness or Inspect; `format` null detects it. */
  readHarnessFile(
    fileName: string,
    blob: Blob,
    format: HarnessFormat | null,
  ): Promise<{ format: HarnessFormat; rows: HarnessRow[]; wallTime: string | null }>;
  /** The offline report's template and what it is stamped with. */
  report: {
    /** `rlvr-workbench 0.1.0`. */
    productName(): string;
    /** The built template's text; a clear error when it was never built. */
    readTemplate(): string;
    gzip: GzipPort;
  };
  /** A judge's answers kept in a JSONL file across runs. */
  openJudgeCache(file: string): Promise<JudgeCache>;
  /** An engine on an OpenAI-compatible server (vLLM, SGLang, llama.cpp, OpenAI). */
  openAiEngine(options: OpenAiEngineFlags): NodeEngine;
}
