/**
 * The CLI's commands reach Node's adapters only through the host that src/cli/main.ts builds
 * (src/cli/node-host.ts, src/adapters/node/node-host.ts): no file of src/cli but main.ts imports
 * src/adapters, nor does any file of the repository but the composition roots (no wrong-way
 * import is left, none listed as known), and the host's input ports read real files: the questions of
 * a Parquet dataset, and a `--db-root` zip's databases into a temporary folder that cleanup removes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkBoundaries } from '../../scripts/check-boundaries.ts';
import { createNodeHost } from '../../src/adapters/node/node-host.ts';
import { resolveDbRoot } from '../../src/cli/commands/db-root-zip.ts';
import { readQuestionsInput } from '../../src/cli/commands/tabular-input.ts';
import { birdQuestionsTable, writeParquet } from '../helpers/parquet-files.ts';
import { minidevFiles, minidevQuestions } from '../helpers/shared-data.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the CLI host', () => {
  it('no file imports a layer the wrong way: src/adapters only from the composition roots, src/app only core', () => {
    const r = checkBoundaries(ROOT);
    expect([...r.known, ...r.wrongWay].map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
    // It parses every file of the repository: a limit no load reaches.
  }, 600_000);

  it('reads a Parquet dataset through host.parquet: the same questions as its JSON', async () => {
    const files = minidevFiles();
    const host = createNodeHost();
    const fromJson = await readQuestionsInput(host, '--dataset', files.dataset!);
    const rows = minidevQuestions();
    const parquet = path.join(mkdtempSync(path.join(tmpdir(), 'wb-host-')), 'mini_dev.parquet');
    writeParquet(parquet, ...birdQuestionsTable(rows.map((r) => ({ ...r }))));
    const fromParquet = await readQuestionsInput(host, '--dataset', parquet);
    expect(fromParquet.length).toBe(rows.length);
    expect(fromParquet.map((q) => [q.dbId, q.question, q.difficulty])).toEqual(
      fromJson.map((q) => [q.dbId, q.question, q.difficulty]),
    );
  });

  it('inflates a --db-root zip into a temporary folder in the <db>/<db>.sqlite layout; cleanup removes it', async () => {
    const files = minidevFiles();
    const dbId = readdirSync(files.dbRoot).sort()[0]!;
    const zip = path.join(mkdtempSync(path.join(tmpdir(), 'wb-host-zip-')), 'dbs.zip');
    execFileSync('zip', ['-q', '-r', zip, dbId], { cwd: files.dbRoot });
    const root = await resolveDbRoot(createNodeHost(), zip);
    try {
      expect(root.dir).not.toBe(zip);
      expect(existsSync(path.join(root.dir, dbId, `${dbId}.sqlite`))).toBe(true);
      expect(readdirSync(root.dir)).toEqual([dbId]);
    } finally {
      await root.cleanup();
    }
    expect(existsSync(root.dir)).toBe(false);
  });
});
