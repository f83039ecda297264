#!/usr/bin/env python3
"""The reference the CLI is compared with: what BIRD mini-dev's official EX evaluator does, written
for the bench from the semantics in shared/docs/EVAL_SEMANTICS.md (not a copy of the script).

Per item, in a multiprocessing pool (2 processes, as `--num_cpus 2`): a new `sqlite3` connection
to the gold line's database, the predicted SQL executed and fetched, then the gold SQL on the
same cursor, the connection closed, EX = set(pred rows) == set(gold rows); any error scores 0,
and so does an item that runs longer than the timeout (30 s, prediction and gold together).
Results are collected by async callbacks and put back in item order; the EX table is printed
per difficulty with 2 decimals.

Where it differs from the script, and why:
- Items whose database is not under --db-root are skipped (the script would create an empty
  database file and score them 0): the bench's data has three of mini-dev's eleven databases.
- Databases are opened read-only (`mode=ro`), so no prediction can change the shared data; on
  these files no prediction writes (a write would be an error here, 0 anyway unless the gold
  saw the change).
- The timeout stops the query (a progress handler interrupts SQLite at the deadline) where
  func_timeout leaves the query running in a thread after giving up on it.

usage: python_reference.py --predictions FILE [--predictions FILE ...] --gold FILE --dataset FILE --db-root DIR
                           [--num-cpus 2] [--timeout-s 30] [--out FILE.json]
"""
import argparse
import json
import multiprocessing as mp
import os
import sqlite3
import sys
import time

SEPARATOR = '\t----- bird -----\t'


def execute_item(args):
    index, db_path, pred, gold, timeout_s = args
    deadline = time.monotonic() + timeout_s
    try:
        conn = sqlite3.connect(f'file:{db_path}?mode=ro', uri=True)
    except Exception as err:  # noqa: BLE001 - any failure scores 0, as in the script
        return index, 0, f'connect: {err}'
    # Called every 10,000 SQLite instructions: a non-zero return interrupts the statement.
    conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
    try:
        cur = conn.cursor()
        cur.execute(pred)
        pred_rows = cur.fetchall()
        cur.execute(gold)
        gold_rows = cur.fetchall()
        return index, 1 if set(pred_rows) == set(gold_rows) else 0, None
    except Exception as err:  # noqa: BLE001
        return index, 0, 'timeout' if time.monotonic() > deadline else f'error: {err}'
    finally:
        conn.close()


def load_items(pred_file, gold_file, dataset_file, db_root):
    with open(pred_file, encoding='utf-8') as f:
        preds = json.load(f)
    with open(gold_file, encoding='utf-8') as f:
        gold_lines = [line.strip().split('\t') for line in f if line.strip()]
    with open(dataset_file, encoding='utf-8') as f:
        questions = json.load(f)
    items = []
    for index, (value, (gold_sql, db_id)) in enumerate(zip(preds.values(), gold_lines)):
        if isinstance(value, str):
            parts = value.split(SEPARATOR)
            sql = parts[0] if len(parts) == 2 else value.strip()
        else:
            sql = ' '
        db_path = os.path.join(db_root, db_id, f'{db_id}.sqlite')
        if not os.path.exists(db_path):
            continue
        difficulty = questions[index].get('difficulty', 'unknown') if index < len(questions) else 'unknown'
        items.append((index, db_path, sql, gold_sql, difficulty))
    return items


def evaluate(items, num_cpus, timeout_s):
    results = {}
    pool = mp.Pool(processes=num_cpus)
    for index, db_path, pred, gold, _ in items:
        pool.apply_async(execute_item, args=((index, db_path, pred, gold, timeout_s),),
                         callback=lambda r: results.__setitem__(r[0], r))
    pool.close()
    pool.join()
    return [results[index] for index, *_ in items]


def table(items, results):
    levels = ['simple', 'moderate', 'challenging']
    by = {level: [] for level in levels}
    for (_, _, _, _, difficulty), (_, ex, _) in zip(items, results):
        if difficulty in by:
            by[difficulty].append(ex)
    all_ex = [ex for _, ex, _ in results]
    cols = [by[level] for level in levels] + [all_ex]
    lines = ['{:20} {:20} {:20} {:20} {:20}'.format('', *levels, 'total'),
             '{:20} {:<20} {:<20} {:<20} {:<20}'.format('count', *[len(c) for c in cols]),
             '{:20} {:<20.2f} {:<20.2f} {:<20.2f} {:<20.2f}'.format('EX', *[100 * sum(c) / len(c) if c else 0 for c in cols])]
    return '\n'.join(lines)


def main():
    ap = argparse.ArgumentParser(description='BIRD EX, the official approach (see the module doc)')
    ap.add_argument('--predictions', action='append', required=True)
    ap.add_argument('--gold', required=True)
    ap.add_argument('--dataset', required=True)
    ap.add_argument('--db-root', required=True)
    ap.add_argument('--num-cpus', type=int, default=2)
    ap.add_argument('--timeout-s', type=float, default=30.0)
    ap.add_argument('--out')
    a = ap.parse_args()
    out = {}
    for pred_file in a.predictions:
        items = load_items(pred_file, a.gold, a.dataset, a.db_root)
        results = evaluate(items, a.num_cpus, a.timeout_s)
        print(pred_file)
        print(table(items, results))
        out[pred_file] = [{'index': r[0], 'ex': r[1], 'error': r[2]} for r in results]
    if a.out:
        with open(a.out, 'w', encoding='utf-8') as f:
            json.dump(out, f)
    print(f'sqlite {sqlite3.sqlite_version}', file=sys.stderr)


if __name__ == '__main__':
    main()
