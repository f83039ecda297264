import { describe, expect, it } from 'vitest';
import { sqlEngineFixture } from '../helpers/sql-engine-fixture.ts';

/**
 * The SQL worker's body on real sql.js: a database holding a view that is not deterministic
 * marks every result on it (`nondeterministicView`, so the pool and the cache share none of
 * them) and reuses no gold there; a database whose views are deterministic reuses its golds as
 * before.
 */
describe('a database with a view that is not deterministic', () => {
  const fx = sqlEngineFixture(
    'volatile',
    'CREATE TABLE t(x); INSERT INTO t VALUES (1); CREATE VIEW v AS SELECT random() AS r; CREATE VIEW w AS SELECT x FROM t',
    { softF1: false, previewRows: 0 },
  );

  it('names the view on every result and executes the gold each time', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await fx.run('SELECT x FROM t', 'SELECT x FROM t', { reuseGold: true });
      expect(r).toMatchObject({ status: 'ok', ex: 1, nondeterministicView: 'v' });
      expect(r.goldReused).toBeUndefined();
    }
  });
});

describe('a database whose views are deterministic', () => {
  const fx = sqlEngineFixture(
    'stable',
    'CREATE TABLE t(x); INSERT INTO t VALUES (1); CREATE VIEW w(n) AS SELECT count(*) FROM t',
    { softF1: false, previewRows: 0 },
  );

  it('marks nothing and reuses the gold', async () => {
    const one = await fx.run('SELECT n FROM w', 'SELECT n FROM w', { reuseGold: true });
    const two = await fx.run('SELECT n FROM w', 'SELECT n FROM w', { reuseGold: true });
    expect(one).toMatchObject({ status: 'ok', ex: 1 });
    expect(one.nondeterministicView).toBeUndefined();
    expect(two).toMatchObject({ status: 'ok', ex: 1, goldReused: true });
    expect(two.nondeterministicView).toBeUndefined();
  });
});
