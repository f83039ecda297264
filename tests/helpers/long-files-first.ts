/**
 * The suite's file order (vite.config.ts `sequence.sequencer`): the longest files start first, so
 * that the 2 workers end together instead of one running a long file alone at the end.
 *
 * A file's length is vitest's own measurement from an earlier run on this machine when its
 * results cache has one, else the seconds in tests/helpers/file-durations.json (the files that
 * took longest in a whole run of the README's test command on the 2-core machine; only their
 * ranking matters, so refresh it when a file's rank changes a lot), else unknown: unknown files follow the known ones in vitest's own order (larger files first).
 * The files of a project that runs without isolation (`isolate: false`) stay together after
 * the others, so that its workers can take one file after another without restarting.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import fileDurations from './file-durations.json' with { type: 'json' };

/** Seconds per `project:path` (path relative to the repository root, with `/`). */
export type FileDurations = Readonly<Record<string, number>>;

/** The ordering itself, on the sort keys vitest gives: stable, longest known first. */
export function longFilesFirst<T>(
  files: readonly T[],
  seconds: (file: T) => number | undefined,
  shared: (file: T) => boolean,
): T[] {
  const rank = (f: T): [number, number] =>
    shared(f) ? [2, 0] : [seconds(f) === undefined ? 1 : 0, -(seconds(f) ?? 0)];
  return files
    .map((file, i) => ({ file, i, rank: rank(file) }))
    .sort((a, b) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1] || a.i - b.i)
    .map((x) => x.file);
}

export default class LongFilesFirstSequencer extends BaseSequencer {
  protected durations: FileDurations = fileDurations;

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const key = (f: TestSpecification) =>
      `${f.project.name}:${relative(this.ctx.config.root, f.moduleId).split('\\').join('/')}`;
    const seconds = (f: TestSpecification): number | undefined => {
      const cached = this.ctx.cache.getFileTestResults(key(f));
      return cached ? cached.duration / 1000 : this.durations[key(f)];
    };
    // Groups (sequence.groupOrder) run one after another: order within each, keep their order.
    const groups = [...new Set(base.map((f) => f.project.config.sequence.groupOrder))];
    return groups.flatMap((g) =>
      longFilesFirst(
        base.filter((f) => f.project.config.sequence.groupOrder === g),
        seconds,
        (f) => f.project.config.isolate === false,
      ),
    );
  }
}
