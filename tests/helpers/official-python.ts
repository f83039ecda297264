/**
 * A reference for the official BIRD evaluator's per-item EX and Soft-F1, run by Debian's
 * python3 with its own sqlite3 module (SQLite 3.40.1 here), written from the documented
 * semantics (/work/shared/docs/EVAL_SEMANTICS.md sections 2-4): prediction then gold on one
 * connection, set equality for EX, the current Soft-F1 (rows de-duplicated in first-occurrence
 * order, paired by position), 30 s per item, any error 0. Databases are opened read-only (the
 * shared data cannot be written anyway).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const PY = String.raw`
import json, sqlite3, sys, time
jobs = json.load(sys.stdin)
TIMEOUT = float(sys.argv[1])

def row_match(p, g):
    n = len(g)
    m = sum(1 for v in p if v in g)
    po = sum(1 for v in p if v not in g)
    to = sum(1 for v in g if v not in p)
    return m / n, po / n, to / n

def soft_f1(pred, gold):
    if not pred and not gold:
        return 1.0
    pred = list(dict.fromkeys(pred))
    gold = list(dict.fromkeys(gold))
    ms, ps, ts = [], [], []
    for i, g in enumerate(gold):
        if i >= len(pred):
            ms.append(0); ts.append(1); continue
        m, p, t = row_match(pred[i], g)
        ms.append(m); ps.append(p); ts.append(t)
    for _ in range(len(pred) - len(gold)):
        ms.append(0); ps.append(1); ts.append(0)
    tp, fp, fn = sum(ms), sum(ps), sum(ts)
    pr = tp / (tp + fp) if tp + fp > 0 else 0
    rc = tp / (tp + fn) if tp + fn > 0 else 0
    return 2 * pr * rc / (pr + rc) if pr + rc > 0 else 0

out = []
for db, pred, gold in jobs:
    conn = sqlite3.connect('file:' + db + '?mode=ro', uri=True)
    start = time.monotonic()
    conn.set_progress_handler(lambda: 1 if time.monotonic() - start > TIMEOUT else 0, 10000)
    try:
        cur = conn.cursor()
        cur.execute(pred)
        p = cur.fetchall()
        cur.execute(gold)
        g = cur.fetchall()
        out.append({'ex': 1 if set(p) == set(g) else 0, 'soft_f1': soft_f1(p, g), 'error': None})
    except Exception as e:
        out.append({'ex': 0, 'soft_f1': 0.0, 'error': str(e)})
    finally:
        conn.close()
print(json.dumps({'sqlite_version': sqlite3.sqlite_version, 'items': out}))
`;

export interface OfficialVerdict {
  ex: 0 | 1;
  soft_f1: number;
  error: string | null;
}

/**
 * Per item (database folder root, db_id, prediction, gold): the reference's verdicts and its
 * SQLite version. Asynchronous (python3 runs as a child process), so a test may let it run
 * beside its own work on the SQL workers. Items with the same database, prediction and gold (the
 * same answer in several files) are run once and given the same verdict.
 */
export function officialVerdicts(
  dbRoot: string,
  items: readonly { dbId: string; predSql: string; goldSql: string }[],
  timeoutS = 30,
): Promise<{ sqliteVersion: string; items: OfficialVerdict[] }> {
  const jobOf = new Map<string, number>();
  const jobs: string[][] = [];
  const jobIndex = items.map((it) => {
    const job = [path.join(dbRoot, it.dbId, `${it.dbId}.sqlite`), it.predSql, it.goldSql];
    const key = JSON.stringify(job);
    let at = jobOf.get(key);
    if (at === undefined) {
      at = jobs.push(job) - 1;
      jobOf.set(key, at);
    }
    return at;
  });
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', PY, String(timeoutS)], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`python3 (the official reference) exited with ${code}: ${Buffer.concat(err).toString()}`));
        return;
      }
      const parsed = JSON.parse(Buffer.concat(out).toString()) as { sqlite_version: string; items: OfficialVerdict[] };
      resolve({ sqliteVersion: parsed.sqlite_version, items: jobIndex.map((at) => ({ ...parsed.items[at]! })) });
    });
    child.stdin.end(JSON.stringify(jobs));
  });
}
