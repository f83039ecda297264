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
import type { TableSchema } from '../core/views/tables.ts';

/** A pool of SQL workers over the databases of a folder: the run's executor and its probes. */
interface NodeSqlPool extends SqlExecutor {
  /** One read-only statement in a worker of the pool's own, with the isolation a prediction gets. */
  probe(dbId: string, sql: string, options: { timeoutMs: number }): Promise<ProbeResult>;
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
    pool(options: { dbRoot: string; workers: number }): NodeSqlPool;
    /** The databases of a folder as the SQL workers read them. */
    folder(dbRoot: string): DbSource;
    /** `descriptions`: read BIRD's `database_description/*.csv` beside each database too. */
    openSchemaReader(dbRoot: string, options: { descriptions: boolean }): Promise<SchemaReader>;
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
