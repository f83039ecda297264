import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KNOWN_DATABASES, knownDatabase } from '../../src/adapters/import/known-databases.ts';
import { sharedData } from '../helpers/shared-data.ts';

describe('published BIRD database fingerprints', () => {
  it('covers the 11 dev databases, each sha256 once', () => {
    expect(new Set(KNOWN_DATABASES.map((k) => k.dbId)).size).toBe(11);
    expect(new Set(KNOWN_DATABASES.map((k) => k.sha256)).size).toBe(KNOWN_DATABASES.length);
  });

  it.each([
    ['superhero', 'superhero from BIRD dev (dev_20240627 and TASQL_fork LFS)'],
    ['student_club', 'student_club from BIRD dev (dev_20240627 and TASQL_fork LFS)'],
    ['toxicology', 'toxicology from BIRD dev (dev_20240627)'],
  ])('recognises the real %s file in ../shared/data', (db, label) => {
    const sha = createHash('sha256')
      .update(readFileSync(sharedData('bird', 'databases', db, `${db}.sqlite`)))
      .digest('hex');
    expect(knownDatabase(sha)).toBe(label);
  });

  it('knows nothing of other files', () => {
    expect(knownDatabase('0'.repeat(64))).toBeNull();
  });
});
