/**
 * Reading a stored multi-turn episode (`SampleRecord.episode`) and a run's policy preset
 * (`RunHeader.preset`) at the boundary, with the field path in every message.
 */
import { WorkbenchError } from '../errors.ts';
import type { JsonReader, Obj } from '../formats/validate.ts';
import type { Episode, EpisodeTurn, ProbeResult } from '../episode/types.ts';
import type { StorageClass } from '../prompt/schema-source.ts';
import { presetFingerprint, type PolicyPreset } from '../prompt/presets.ts';
import type { RunHeader } from '../run/types.ts';

const END_REASONS = ['solution', 'turn-limit', 'format-failure', 'engine-error'] as const;
const STORAGE_CLASSES: readonly StorageClass[] = ['integer', 'real', 'text', 'blob', 'null'];

function readProbe(r: JsonReader, v: unknown, path: string): ProbeResult {
  const o = r.obj(v, path);
  const columns = r
    .arr(o.columns, `${path}.columns`)
    .map((c, i) => (typeof c === 'string' ? c : r.fail(`${path}.columns[${i}]`, 'a string', c)));
  const rows = r
    .arr(o.rows, `${path}.rows`)
    .map((row, i) =>
      r
        .arr(row, `${path}.rows[${i}]`)
        .map((cell, j) =>
          cell === null || typeof cell === 'string' || (typeof cell === 'number' && Number.isFinite(cell))
            ? cell
            : r.fail(`${path}.rows[${i}][${j}]`, 'null, a finite number or a string', cell),
        ),
    );
  const classes = r.arr(o.classes, `${path}.classes`).map((row, i) => {
    const cells = r.arr(row, `${path}.classes[${i}]`);
    if (cells.length !== (rows[i]?.length ?? -1))
      r.fail(`${path}.classes[${i}]`, `one storage class per cell of rows[${i}]`, row);
    return cells.map((c, j) =>
      (STORAGE_CLASSES as readonly unknown[]).includes(c)
        ? (c as StorageClass)
        : r.fail(`${path}.classes[${i}][${j}]`, `one of ${STORAGE_CLASSES.join(', ')}`, c),
    );
  });
  if (classes.length !== rows.length) r.fail(`${path}.classes`, `${rows.length} rows of storage classes`, o.classes);
  const probe: ProbeResult = { columns, rows, classes };
  const error = r.optional(o, 'error', path, r.str);
  if (error !== undefined) probe.error = error;
  const timedOut = r.optional(o, 'timedOut', path, r.bool);
  if (timedOut !== undefined) probe.timedOut = timedOut;
  if (o.notKept !== undefined) {
    if (o.notKept !== true) r.fail(`${path}.notKept`, 'true (a replayed dump keeps no rows) or absent', o.notKept);
    probe.notKept = true;
  }
  return probe;
}

function readTurn(r: JsonReader, v: unknown, path: string): EpisodeTurn {
  const o = r.obj(v, path);
  const turn: EpisodeTurn = {
    text: r.str(o, 'text', path),
    tokens: r.nullable(o, 'tokens', path, r.int),
    probeSql: r.nullable(o, 'probeSql', path, r.str),
    probe: o.probe === null ? null : readProbe(r, o.probe, `${path}.probe`),
    observation: r.nullable(o, 'observation', path, r.str),
    ms: r.num(o, 'ms', path),
  };
  // The verl environment's turns: every tool call (SQL, probe, the tool's response).
  if (o.toolCalls !== undefined)
    turn.toolCalls = r.arr(o.toolCalls, `${path}.toolCalls`).map((c, i) => {
      const at = `${path}.toolCalls[${i}]`;
      const co = r.obj(c, at);
      return {
        sql: r.nullable(co, 'sql', at, r.str),
        probe: co.probe === null ? null : readProbe(r, co.probe, `${at}.probe`),
        response: r.str(co, 'response', at),
      };
    });
  return turn;
}

/** A sample's episode; use as `readEpisode(r, o.episode, `${path}.episode`)`. */
export function readEpisode(r: JsonReader, v: unknown, path: string): Episode {
  const o: Obj = r.obj(v, path);
  const turns = r.arr(o.turns, `${path}.turns`).map((t, i) => readTurn(r, t, `${path}.turns[${i}]`));
  const turnsUsed = r.int(o, 'turnsUsed', path);
  if (turnsUsed !== turns.length) r.fail(`${path}.turnsUsed`, `${turns.length} (the number of turns)`, turnsUsed);
  const episode: Episode = {
    envId: r.str(o, 'envId', path),
    turns,
    turnsUsed,
    probesFailed: r.int(o, 'probesFailed', path),
    finalSql: r.nullable(o, 'finalSql', path, r.str),
    endReason: r.oneOf(o, 'endReason', path, END_REASONS),
    formatValid: r.bool(o, 'formatValid', path),
    presetReward: r.nullable(o, 'presetReward', path, r.num),
  };
  const error = r.optional(o, 'error', path, r.str);
  if (error !== undefined) episode.error = error;
  if (o.replay !== undefined) {
    const at = `${path}.replay`;
    const rp = r.obj(o.replay, at);
    episode.replay = { format: r.str(rp, 'format', at), stopReason: r.nullable(rp, 'stopReason', at, r.str) };
  }
  return episode;
}

/**
 * The run's preset: id, fingerprint and content, the fingerprint checked against the content
 * (a preset never changes once a run used it: an edited content is refused, not re-labelled).
 */
export function readRunPreset(r: JsonReader, v: unknown, path: string): NonNullable<RunHeader['preset']> {
  const o = r.obj(v, path);
  const id = r.str(o, 'id', path);
  const fingerprint = r.str(o, 'fingerprint', path);
  const content = r.obj(o.content, `${path}.content`) as unknown as PolicyPreset;
  if (content.id !== id) r.fail(`${path}.content.id`, JSON.stringify(id), content.id);
  const actual = presetFingerprint(content);
  if (actual !== fingerprint)
    throw new WorkbenchError(
      'BAD_FORMAT',
      `${path}.fingerprint is ${fingerprint} but the preset's content gives ${actual}: the content was edited after the run; re-export the run or use a new preset id`,
      r.file,
    );
  return { id, fingerprint, content };
}
