/**
 * One question of a multi-sample run as the per-question view shows it: its samples in sample
 * order, grouped by result signature (`resultKey`: samples whose results EX calls equal share
 * one), the groups lettered A, B, … by size then first sample, and the majority vote over all n
 * samples with the rules of majority.ts (samples without a result or without SQL abstain; a tie
 * between t groups gives each 1/t, the expectation maj@n reports for k = n). Pure.
 */
import type { SampleRecord } from '../run/types.ts';
import { voteGroups } from './majority.ts';

interface ResultGroup {
  /** A, B, C, … (the largest group first). */
  label: string;
  resultKey: string;
  /** Sample numbers in the group, ascending. */
  samples: number[];
  /** Mean EX of the group's samples. */
  ex: number;
  /** Among the groups tied for the largest size (the vote's candidates). */
  top: boolean;
}

export interface QuestionSamples {
  samples: SampleRecord[];
  groups: ResultGroup[];
  /** Sample numbers that do not vote (no result: error, timeout, no SQL). */
  abstain: number[];
  /** Groups tied for the most votes (0 when nobody voted). */
  tied: number;
  /** Expected EX of the majority vote over all samples (0 when nobody voted); null when the question is not scored. */
  majority: number | null;
  /** Samples with EX 1. */
  right: number;
  /** False when the question's database was not imported: nothing was run, nothing is scored. */
  scored: boolean;
  /** Group label by sample number (absent for abstaining samples). */
  groupOf: Map<number, string>;
}

const letter = (i: number): string => (i < 26 ? String.fromCharCode(65 + i) : `G${i + 1}`);

export function questionSamples(all: readonly SampleRecord[]): QuestionSamples {
  const samples = [...all].sort((a, b) => a.sample - b.sample);
  const scored = samples.length > 0 && samples.every((s) => s.status !== 'missing-db');
  const { groups: votes } = voteGroups(samples);
  const members = new Map<string, number[]>();
  const abstain: number[] = [];
  for (const s of samples) {
    if (s.resultKey === undefined || s.format === 0) abstain.push(s.sample);
    else members.set(s.resultKey, [...(members.get(s.resultKey) ?? []), s.sample]);
  }
  const max = votes.reduce((m, g) => Math.max(m, g.size), 0);
  const groups = [...votes]
    .sort((a, b) => b.size - a.size || a.first - b.first)
    .map((g, i): ResultGroup => ({
      label: letter(i),
      resultKey: g.resultKey,
      samples: members.get(g.resultKey) ?? [],
      ex: g.value,
      top: g.size === max,
    }));
  const top = groups.filter((g) => g.top);
  const majority = !scored ? null : top.length === 0 ? 0 : top.reduce((sum, g) => sum + g.ex, 0) / top.length;
  const groupOf = new Map<number, string>();
  for (const g of groups) for (const n of g.samples) groupOf.set(n, g.label);
  return {
    samples,
    groups,
    abstain,
    tied: top.length,
    majority,
    right: samples.filter((s) => s.ex === 1).length,
    scored,
    groupOf,
  };
}
