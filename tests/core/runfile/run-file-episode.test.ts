/** Run files with multi-turn episodes and a policy preset: kept through export and import, malformed ones refused by name. */
import { describe, expect, it } from 'vitest';
import { runFileJson } from '../../../src/core/runfile/export.ts';
import { parseRunFile } from '../../../src/core/runfile/run-file.ts';
import { episodeRunFile } from '../../helpers/episode-records.ts';

const file = episodeRunFile();
const text = runFileJson(file);

/** The run file's JSON with `edit` applied to its parsed value. */
function edited(edit: (o: { run: Record<string, unknown>; samples: Record<string, any>[] }) => void): string {
  const o = JSON.parse(text) as { run: Record<string, unknown>; samples: Record<string, any>[] };
  edit(o);
  return JSON.stringify(o);
}

describe('run files with episodes', () => {
  it('keeps every turn, probe row, storage class and observation and the preset through export and import', () => {
    const back = parseRunFile(text, 'episodes.run.json');
    expect(back.samples.map((s) => s.episode)).toEqual(file.samples.map((s) => s.episode));
    expect(back.run.preset).toEqual(file.run.preset);
    // The fixtures hold a probe with rows, an error, a timeout, a turn without a probe and a blob cell.
    const turns = back.samples.flatMap((s) => s.episode!.turns);
    expect(turns.some((t) => t.probe?.rows.length)).toBe(true);
    expect(turns.some((t) => t.probe?.error)).toBe(true);
    expect(turns.some((t) => t.probe?.timedOut)).toBe(true);
    expect(turns.some((t) => t.probeSql === null && t.observation !== null)).toBe(true);
    expect(turns.some((t) => t.probe?.classes.flat().includes('blob'))).toBe(true);
  });

  it.each([
    [
      'a turn count that is not the number of turns',
      (o: { samples: Record<string, any>[] }) => (o.samples[0]!.episode.turnsUsed = 9),
      'samples[0].episode.turnsUsed must be 5 (the number of turns), found number 9',
    ],
    [
      'an unknown end reason',
      (o: { samples: Record<string, any>[] }) => (o.samples[1]!.episode.endReason = 'gave-up'),
      'samples[1].episode.endReason must be one of "solution", "turn-limit", "format-failure"',
    ],
    [
      'a probe cell that is an object',
      (o: { samples: Record<string, any>[] }) => (o.samples[0]!.episode.turns[0].probe.rows[0][1] = { x: 1 }),
      'samples[0].episode.turns[0].probe.rows[0][1] must be null, a finite number or a string',
    ],
    [
      'storage classes of another shape than the rows',
      (o: { samples: Record<string, any>[] }) => o.samples[0]!.episode.turns[0].probe.classes[0].pop(),
      'samples[0].episode.turns[0].probe.classes[0] must be one storage class per cell of rows[0]',
    ],
    [
      'a turn without its text',
      (o: { samples: Record<string, any>[] }) => delete o.samples[2]!.episode.turns[1].text,
      'samples[2].episode.turns[1].text must be a string',
    ],
  ])('refuses %s, naming the field', (_what, edit, message) => {
    expect(() => parseRunFile(edited(edit), 'bad.run.json')).toThrow(message);
  });

  it('refuses a preset whose content was edited after the run (its fingerprint no longer matches)', () => {
    const bad = edited((o) => {
      const preset = o.run.preset as { content: { sampling: { temperature: number } } };
      preset.content.sampling.temperature = 0.7;
    });
    expect(() => parseRunFile(bad, 'bad.run.json')).toThrow(
      /run\.preset\.fingerprint is [0-9a-f]{8} but the preset's content gives/,
    );
    const otherId = edited((o) => ((o.run.preset as { id: string }).id = 'omnisql-v1'));
    expect(() => parseRunFile(otherId, 'bad.run.json')).toThrow('run.preset.content.id must be "omnisql-v1"');
  });
});
