import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDatabasesUnchanged, hashDatabases, sha256File } from '../../src/cli/commands/run-out.ts';
import { isWorkbenchError } from '../../src/core/errors.ts';
import { sharedData } from '../helpers/shared-data.ts';

/**
 * A weak case: the run file's database sha256 was taken after the run, so a database
 * replaced mid-run was recorded with the new hash. Now it is taken before the run (the bytes the
 * workers read) and checked after it, before anything is written.
 */
describe('database hashes of the run file: taken before the run, checked after', () => {
  const root = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-hash-'));
    for (const db of ['superhero', 'toxicology']) {
      mkdirSync(path.join(dir, db));
      copyFileSync(sharedData('bird', 'databases', db, `${db}.sqlite`), path.join(dir, db, `${db}.sqlite`));
    }
    return dir;
  };

  it('hashes each named database that exists, once; a missing one is left out', async () => {
    const dir = root();
    const h = await hashDatabases(dir, ['toxicology', 'superhero', 'superhero', 'no_such_db']);
    expect([...h.keys()]).toEqual(['superhero', 'toxicology']);
    expect(h.get('superhero')).toBe(await sha256File(sharedData('bird', 'databases', 'superhero', 'superhero.sqlite')));
    await expect(checkDatabasesUnchanged(dir, h)).resolves.toBeUndefined();
  });

  it('a database replaced after the hash is an error naming it, its path and both hashes', async () => {
    const dir = root();
    const h = await hashDatabases(dir, ['superhero', 'toxicology']);
    copyFileSync(
      sharedData('bird', 'databases', 'student_club', 'student_club.sqlite'),
      path.join(dir, 'superhero', 'superhero.sqlite'),
    );
    const err = await checkDatabasesUnchanged(dir, h, '/shown/root').catch((e: unknown) => e);
    expect(isWorkbenchError(err) && err.code).toBe('MISMATCH');
    expect((err as Error).message).toMatch(
      new RegExp(
        `^--db-root: database superhero changed during the run \\(/shown/root/superhero/superhero.sqlite: sha256 ${h.get('superhero')!.slice(0, 12)}… before, [0-9a-f]{12}… after\\)`,
      ),
    );
  });

  it('a database removed during the run is reported as gone', async () => {
    const dir = root();
    const h = await hashDatabases(dir, ['toxicology']);
    rmSync(path.join(dir, 'toxicology', 'toxicology.sqlite'));
    await expect(checkDatabasesUnchanged(dir, h)).rejects.toThrow(
      /^--db-root: database toxicology changed during the run \(.*: sha256 [0-9a-f]{12}… before, gone after\)/,
    );
  });
});
