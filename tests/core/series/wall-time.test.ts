/**
 * A step's wall time from the dump itself where its format has one (docs/series.md "Wall time"):
 * an Inspect log's `stats.completed_at` (else `started_at`, else `eval.created`), in a `.json` log
 * or a `.eval` zip's `header.json` / `_journal/start.json`; the `date` of the lm-eval results file
 * beside a samples file. verl dumps have none (the hosts then take the file's modification time).
 */
import { readFileSync } from 'node:fs';
import { BlobWriter, TextReader, ZipWriter } from '@zip.js/zip.js';
import { describe, expect, it } from 'vitest';
import { readSeriesDump } from '../../../src/adapters/harness/series-dump.ts';
import { inspectLogWallTime, lmEvalResultsName } from '../../../src/core/formats/harness.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { inspectLogJson, MINIDEV_QUESTIONS, verlLines } from '../../helpers/series-dumps.ts';

const questions = parseQuestions(readFileSync(MINIDEV_QUESTIONS, 'utf8'), 'mini_dev_sqlite.json');
const times = {
  created: '2025-03-01T09:00:00+00:00',
  startedAt: '2025-03-01T09:00:01+00:00',
  completedAt: '2025-03-01T10:30:00.250+02:00',
};

async function evalZip(entries: Record<string, unknown>): Promise<Blob> {
  const zip = new ZipWriter(new BlobWriter('application/zip'));
  for (const [name, value] of Object.entries(entries)) await zip.add(name, new TextReader(JSON.stringify(value)));
  return zip.close();
}

describe('the wall time a dump carries', () => {
  const log = JSON.parse(inspectLogJson(3, times)) as { eval: unknown; stats: unknown; samples: unknown[] };

  it('an Inspect .json log: stats.completed_at, as UTC ISO 8601, else started_at, else eval.created', async () => {
    const dump = await readSeriesDump('checkpoint-40/log.json', new Blob([JSON.stringify(log)]), questions);
    expect(dump.steps.map((s) => [s.step, s.wallTime])).toEqual([[40, '2025-03-01T08:30:00.250Z']]);
    expect(inspectLogWallTime({ ...log, stats: { started_at: times.startedAt, completed_at: '' } })).toBe(
      '2025-03-01T09:00:01.000Z',
    );
    expect(inspectLogWallTime({ ...log, stats: {} })).toBe('2025-03-01T09:00:00.000Z');
    expect(inspectLogWallTime({ samples: [] })).toBeNull();
  });

  it('an Inspect .eval zip: header.json, else the journal start', async () => {
    const samples = Object.fromEntries(log.samples.map((s, i) => [`samples/${i + 1}_epoch_1.json`, s]));
    const whole = await evalZip({ 'header.json': { eval: log.eval, stats: log.stats }, ...samples });
    expect((await readSeriesDump('step-8.eval', whole, questions)).steps[0]!.wallTime).toBe('2025-03-01T08:30:00.250Z');
    const running = await evalZip({ '_journal/start.json': { version: 2, eval: log.eval }, ...samples });
    expect((await readSeriesDump('step-8.eval', running, questions)).steps[0]!.wallTime).toBe(
      '2025-03-01T09:00:00.000Z',
    );
  });

  it('an lm-eval samples file: the date of the results file beside it (read by name), none without it; the results file gives no step', async () => {
    expect(lmEvalResultsName('samples_bird_2025-01-01T10-20-30.123456.jsonl')).toBe(
      'results_2025-01-01T10-20-30.123456.json',
    );
    expect(lmEvalResultsName('samples.jsonl')).toBeNull();
    const q = questions.find((x) => x.dbId === 'superhero')!;
    const line = JSON.stringify({
      doc_id: 0,
      doc: { question_id: q.questionId },
      resps: [[q.goldSql]],
      filter: 'none',
    });
    const results = { results: { bird: {} }, configs: { bird: {} }, date: 1735726830.5 };
    const asked: string[] = [];
    const sibling = async (name: string) => (asked.push(name), new Blob([JSON.stringify(results)]));
    const name = 'checkpoint-3/samples_bird_2025-01-01T10-20-30.jsonl';
    const dump = await readSeriesDump(name, new Blob([line]), questions, { sibling });
    expect(asked).toEqual(['results_2025-01-01T10-20-30.json']);
    expect(dump.steps[0]!.wallTime).toBe('2025-01-01T10:20:30.500Z');
    expect((await readSeriesDump(name, new Blob([line]), questions)).steps[0]!.wallTime).toBeNull();
    const own = await readSeriesDump(
      'checkpoint-3/results_2025-01-01T10-20-30.json',
      new Blob([JSON.stringify(results)]),
      questions,
    );
    expect(own.steps).toEqual([]);
    expect(own.notes[0]).toContain('an lm-eval results file');
  });

  it('a verl dump has none of its own', async () => {
    const dump = await readSeriesDump('100.jsonl', new Blob([verlLines(0).slice(0, 3).join('\n')]), questions);
    expect(dump.steps.map((s) => [s.step, s.wallTime])).toEqual([[100, null]]);
  });
});
