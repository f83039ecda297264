/**
 * Import of a dataset into IndexedDB (runs in the import worker). Order of writes, so that a
 * failure leaves nothing half-written and changes nothing stored before:
 *   1. questions and gold are read, parsed and checked against each other (nothing written);
 *   2. each database is hashed (first pass) and checked for the SQLite header; one already
 *      stored (same sha256) is not written again;
 *   3. new databases are written as chunks under a Web Lock, each database record not yet;
 *   4. ONE last transaction adds the database records and the dataset record together.
 * On any failure the chunks written by this import are deleted and the locks released.
 */
import { WorkbenchError } from '../../core/errors.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import { parseTablesJson } from '../../core/formats/tables-json.ts';
import type { BirdTablesEntry } from '../../core/prompt/omnisql-schema.ts';
import type { FileRef } from '../../core/run/types.ts';
import type { GoldEntry, Question } from '../../core/types.ts';
import { dbWriteLock, holdLock } from '../store/database-bytes.ts';
import { StoreError, isQuotaError, mib } from '../../app/store-errors.ts';
import { sameDatasetFiles } from '../../app/dataset-identity.ts';
import { CHUNK_BYTES, chunkRange, type DatabaseRecord, type WorkbenchIdb } from '../store/schema.ts';
import type { DatasetRecord, ImportProgress, ImportSource } from '../../app/store-ports.ts';
import { classifyFiles } from '../../core/import/classify-files.ts';
import { abortError, checkSqliteHeader, readTextFile, streamFile } from './hash-stream.ts';
import { checkSidecars } from './sidecar-check.ts';
import { checkSqliteSize } from './sqlite-size.ts';
import { readQuestionsFile } from './questions-file.ts';
import { expandFiles, type ImportFile } from './import-files.ts';
import { knownDatabase } from './known-databases.ts';

interface ImportOptions {
  signal?: AbortSignal;
  onProgress?: (p: ImportProgress) => void;
  /**
   * Test double for a full disk: the chunk write that would pass this many database bytes
   * throws a real `DOMException('…', 'QuotaExceededError')` instead of writing.
   */
  simulateQuotaAfterBytes?: number;
}

/** Questions and gold agree: same count and the same db_id at each position. */
function checkGoldMatchesQuestions(
  questions: Question[],
  gold: GoldEntry[],
  questionsName: string,
  goldName: string,
): void {
  if (questions.length !== gold.length) {
    throw new WorkbenchError(
      'MISMATCH',
      `${questionsName} has ${questions.length} questions but ${goldName} has ${gold.length} gold lines: ` +
        'they are not from the same dataset. Import the gold file that came with these questions.',
      goldName,
    );
  }
  const i = questions.findIndex((q, k) => q.dbId !== gold[k]!.dbId);
  if (i >= 0) {
    throw new WorkbenchError(
      'MISMATCH',
      `question ${i} (${questionsName}) is about database "${questions[i]!.dbId}" but gold line ${i + 1} is about ` +
        `"${gold[i]!.dbId}": the files are not in the same order or not from the same dataset`,
      `${goldName}:${i + 1}`,
    );
  }
}

function throttle(fn: ((p: ImportProgress) => void) | undefined): (p: ImportProgress, force?: boolean) => void {
  let last = 0;
  return (p, force = false) => {
    if (!fn) return;
    const now = performance.now();
    if (force || now - last >= 100) {
      last = now;
      fn(p);
    }
  };
}

interface DbPlan {
  dbId: string;
  file: ImportFile;
  sha256: string;
  size: number;
  /** Already stored before this import: nothing to write. */
  existing: boolean;
}

export async function importDataset(
  idb: WorkbenchIdb,
  source: ImportSource,
  opts: ImportOptions = {},
): Promise<DatasetRecord> {
  const { signal } = opts;
  const progress = throttle(opts.onProgress);
  const check = () => {
    if (signal?.aborted) throw abortError();
  };

  // 1. Files, questions, gold.
  // A deflated inner zip (BIRD's dev_databases.zip) is inflated to disk first, with progress.
  const files = await expandFiles(source.files, {
    signal,
    onBytes: (doneBytes, totalBytes) =>
      progress({ phase: 'reading', file: 'unpacking the inner zip', doneBytes, totalBytes }),
  });
  const byPath = new Map(files.map((f) => [f.path, f]));
  const classified = classifyFiles([...byPath.keys()], {
    questionsPath: source.questionsPath,
    goldPath: source.goldPath,
  });
  const qFile = byPath.get(classified.questions)!;
  progress({ phase: 'parsing', file: qFile.path, doneBytes: 0, totalBytes: qFile.size }, true);
  const qRead = await readQuestionsFile(qFile, signal);
  const questions = qRead.questions;
  const questionsFile: FileRef = { name: qFile.path, sha256: qRead.sha256, bytes: qRead.bytes };
  let gold: GoldEntry[];
  let goldFile: FileRef | null = null;
  if (classified.gold) {
    const gFile = byPath.get(classified.gold)!;
    const gText = await readTextFile(gFile, signal);
    gold = parseGoldSql(gText.text, gFile.path);
    goldFile = { name: gFile.path, sha256: gText.sha256, bytes: gText.bytes };
    checkGoldMatchesQuestions(questions, gold, qFile.path, gFile.path);
  } else {
    // Spider and custom sets without a gold file: the questions' own SQL is the gold.
    gold = questions.map((q) => ({ sql: q.goldSql, dbId: q.dbId }));
  }
  // The tables.json beside the questions: the entries of the questions' databases (OmniSQL's schema renderer).
  const used = new Set(questions.map((q) => q.dbId));
  let tables: { entries: BirdTablesEntry[]; file: FileRef } | null = null;
  if (classified.tables) {
    const tFile = byPath.get(classified.tables)!;
    const tText = await readTextFile(tFile, signal);
    tables = {
      entries: parseTablesJson(tText.text, tFile.path).filter((e) => used.has(e.db_id)),
      file: { name: tFile.path, sha256: tText.sha256, bytes: tText.bytes },
    };
  }
  check();

  // 2. Hash every database the questions use.
  const plans: DbPlan[] = [];
  for (const dbId of [...used].sort()) {
    const path = classified.databases.get(dbId);
    if (!path) continue;
    const file = byPath.get(path)!;
    await checkSidecars(path, byPath);
    const total = file.size;
    let header: Uint8Array = new Uint8Array(0);
    const { sha256, bytes } = await streamFile(file, {
      signal,
      onHead: (head) => checkSqliteHeader(head, file.path, dbId),
      onData: (piece) => {
        if (header.length < 100) header = concatHead(header, piece);
      },
      onBytes: (done) => progress({ phase: 'hashing', file: file.path, doneBytes: done, totalBytes: total }),
    });
    if (bytes === 0) checkSqliteHeader(new Uint8Array(0), file.path, dbId);
    checkSqliteSize(header, bytes, file.path, dbId);
    progress({ phase: 'hashing', file: file.path, doneBytes: bytes, totalBytes: total }, true);
    // The same database at another path: one database if the bytes are the same, refused otherwise
    // (whichever copy came first would be scored silently).
    for (const twinPath of classified.twins.get(dbId) ?? []) {
      const twin = byPath.get(twinPath)!;
      const same =
        twin.size === file.size &&
        (await streamFile(twin, {
          signal,
          onBytes: (done) => progress({ phase: 'hashing', file: twin.path, doneBytes: done, totalBytes: twin.size }),
        }).then((t) => t.sha256 === sha256));
      if (!same)
        throw new WorkbenchError(
          'BAD_FORMAT',
          `database ${dbId} is in the import twice with different contents: ${path} and ${twinPath}; ` +
            'which copy the golds are meant for cannot be told, so neither is used. Keep one copy and import again',
          'import',
        );
    }
    plans.push({ dbId, file, sha256, size: bytes, existing: (await idb.count('databases', sha256)) > 0 });
  }

  // 3. Write new databases' chunks, holding their locks until the records are committed.
  const releases: Array<() => void> = [];
  const written: string[] = [];
  let storedBytes = 0;
  const newBytes = plans.filter((p) => !p.existing).reduce((n, p) => n + p.size, 0);
  try {
    const seen = new Set<string>();
    for (const plan of plans) {
      if (plan.existing || seen.has(plan.sha256)) continue;
      seen.add(plan.sha256);
      const release = await holdLock(dbWriteLock(plan.sha256), true);
      if (!release) {
        throw new StoreError(
          'LOCKED',
          `Dataset "${source.name}": database ${plan.dbId} is being imported in another tab right now. ` +
            'Wait until that import ends, then import this dataset again (the database will not be stored twice).',
        );
      }
      releases.push(release);
      written.push(plan.sha256);
      // Chunks left over by an import that died with its tab.
      await idb.delete('chunks', chunkRange(plan.sha256));
      try {
        await writeChunks(idb, plan, {
          signal,
          onBytes: (done) =>
            progress({ phase: 'storing', file: plan.file.path, doneBytes: done, totalBytes: plan.size }),
          beforeWrite: (bytes) => {
            if (opts.simulateQuotaAfterBytes !== undefined && storedBytes + bytes > opts.simulateQuotaAfterBytes) {
              throw new DOMException('simulated: the quota of this origin is exhausted', 'QuotaExceededError');
            }
            storedBytes += bytes;
          },
        });
      } catch (err) {
        if (!isQuotaError(err)) throw err;
        throw new StoreError(
          'QUOTA_EXCEEDED',
          `Browser storage is full: dataset "${source.name}" was not imported (it stopped while storing database ` +
            `${plan.dbId}, ${mib(plan.size)}; the new databases of this dataset need ${mib(newBytes)}). Nothing stored before was changed. ` +
            'Free space by deleting datasets or runs you no longer need, or allow this site to store more, then import again.',
        );
      }
      progress({ phase: 'storing', file: plan.file.path, doneBytes: plan.size, totalBytes: plan.size }, true);
    }
    check();

    // 4. Database records and the dataset record, together.
    const now = new Date().toISOString();
    const dataset: DatasetRecord = {
      id: crypto.randomUUID(),
      name: source.name,
      kind: source.kind,
      createdAt: now,
      questionsFile,
      goldFile,
      questions,
      gold,
      databases: Object.fromEntries(plans.map((p) => [p.dbId, p.sha256])),
    };
    if (tables && tables.entries.length > 0) {
      dataset.tables = tables.entries;
      dataset.tablesFile = tables.file;
    }
    const tx = idb.transaction(['datasets', 'databases'], 'readwrite');
    // The same files imported again under the same name: the stored dataset, not a duplicate
    // (every database is stored already, so this import wrote nothing).
    const stored =
      written.length === 0
        ? (await tx.objectStore('datasets').getAll()).find(
            (d) => d.name === dataset.name && sameDatasetFiles(d, dataset),
          )
        : undefined;
    if (stored) {
      await tx.done;
      progress({ phase: 'done', file: '', doneBytes: newBytes, totalBytes: newBytes }, true);
      return stored;
    }
    const dbStore = tx.objectStore('databases');
    for (const plan of plans) {
      if (await dbStore.get(plan.sha256)) continue;
      if (!written.includes(plan.sha256)) {
        tx.done.catch(() => undefined);
        tx.abort();
        throw new StoreError(
          'LOCKED',
          `Dataset "${source.name}": database ${plan.dbId} was deleted in another tab during the import. Import the dataset again.`,
        );
      }
      const record: DatabaseRecord = {
        sha256: plan.sha256,
        dbId: plan.dbId,
        sizeBytes: plan.size,
        knownAs: knownDatabase(plan.sha256),
        storedAt: now,
        chunkCount: Math.max(1, Math.ceil(plan.size / CHUNK_BYTES)),
        chunkBytes: CHUNK_BYTES,
      };
      await dbStore.put(record);
    }
    await tx.objectStore('datasets').put(dataset);
    try {
      await tx.done;
    } catch (err) {
      if (!isQuotaError(err)) throw err;
      throw new StoreError(
        'QUOTA_EXCEEDED',
        `Browser storage is full: dataset "${source.name}" was not imported (its record did not fit). Nothing stored before was changed. ` +
          'Free space by deleting datasets or runs you no longer need, then import again.',
      );
    }
    written.length = 0; // committed: nothing to clean up
    progress({ phase: 'done', file: '', doneBytes: newBytes, totalBytes: newBytes }, true);
    return dataset;
  } finally {
    for (const sha of written) await idb.delete('chunks', chunkRange(sha)).catch(() => undefined);
    for (const release of releases) release();
  }
}

/** Second pass over one database: its bytes as Blob chunks under [sha256, n]. */
async function writeChunks(
  idb: WorkbenchIdb,
  plan: DbPlan,
  hooks: { signal?: AbortSignal; onBytes: (done: number) => void; beforeWrite: (bytes: number) => void },
): Promise<void> {
  let n = 0;
  let done = 0;
  const put = async (blob: Blob) => {
    hooks.beforeWrite(blob.size);
    await idb.put('chunks', blob, [plan.sha256, n++]);
    done += blob.size;
    hooks.onBytes(done);
  };
  const { file } = plan;
  if (file.slice) {
    // A loose file: slices go to IndexedDB without passing through JavaScript memory.
    for (let at = 0; at < plan.size || n === 0; at += CHUNK_BYTES) {
      if (hooks.signal?.aborted) throw abortError();
      await put(file.slice(at, Math.min(plan.size, at + CHUNK_BYTES)));
    }
    return;
  }
  // A zip entry: decompress again, in one reused buffer, and check it is the same file.
  const buf = new Uint8Array(CHUNK_BYTES);
  let fill = 0;
  const { sha256 } = await streamFile(file, {
    signal: hooks.signal,
    onData: async (piece) => {
      let off = 0;
      while (off < piece.length) {
        const take = Math.min(piece.length - off, CHUNK_BYTES - fill);
        buf.set(piece.subarray(off, off + take), fill);
        fill += take;
        off += take;
        if (fill === CHUNK_BYTES) {
          await put(new Blob([buf]));
          fill = 0;
        }
      }
    },
  });
  if (fill > 0 || n === 0) await put(new Blob([buf.subarray(0, fill)]));
  if (sha256 !== plan.sha256) {
    throw new WorkbenchError('BAD_FORMAT', 'the file changed while it was being imported: import it again', file.path);
  }
}

/** The first 100 bytes of a file, gathered from its stream pieces (the SQLite header). */
function concatHead(head: Uint8Array, piece: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.min(100, head.length + piece.length));
  out.set(head);
  out.set(piece.subarray(0, out.length - head.length), head.length);
  return out;
}
