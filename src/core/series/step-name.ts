/**
 * The training step of a checkpoint's file, read from its name (docs/series.md, "Step from the
 * file name"). The rule is shown before anything is evaluated and can be replaced by a regular
 * expression of the user's (`--step-pattern`), whose first capture group (or group `step`) is the step.
 */
import { WorkbenchError } from '../errors.ts';

export interface StepRule {
  /** What the rule matches, as shown to the user. */
  name: string;
  regex: RegExp;
}

/**
 * The built-in rules, tried on each path segment from the file name up to its folders; the
 * first rule that matches a segment wins (a segment nearer the file wins over its folders).
 */
const DEFAULT_STEP_RULES: readonly StepRule[] = [
  { name: 'global_step_<N>', regex: /global[_-]?step[_-]?(\d+)/i },
  { name: 'checkpoint-<N>', regex: /checkpoint[_-]?(\d+)/i },
  { name: 'step-<N> / step_<N> / step<N>', regex: /(?:^|[^a-z])step[_-]?(\d+)/i },
  { name: '<N>.<ext> (verl: <global_steps>.jsonl)', regex: /^(\d+)(?:\.[a-z0-9]+)+$/i },
];

export const DEFAULT_STEP_RULE_TEXT = DEFAULT_STEP_RULES.map((r) => r.name).join(', ');

/** Compiles a user's `--step-pattern`; it must have a capture group. */
export function compileStepPattern(source: string, where = '--step-pattern'): StepRule {
  let regex: RegExp;
  try {
    regex = new RegExp(source);
  } catch (err) {
    throw new WorkbenchError('BAD_OPTION', `not a regular expression: ${(err as Error).message}`, where);
  }
  if (new RegExp(`${source}|`).exec('')!.length < 2) {
    throw new WorkbenchError(
      'BAD_OPTION',
      `${JSON.stringify(source)} has no capture group: put the step's digits in ( ), e.g. "ckpt(\\d+)"`,
      where,
    );
  }
  return { name: `/${source}/`, regex };
}

interface StepMatch {
  step: number;
  /** The rule that matched. */
  rule: string;
}

function matchStep(text: string, regex: RegExp): number | null {
  const m = regex.exec(text);
  if (!m) return null;
  const digits = m.groups?.step ?? m.slice(1).find((g) => g !== undefined);
  if (digits === undefined || !/^\d+$/.test(digits)) return null;
  const step = Number(digits);
  return Number.isSafeInteger(step) ? step : null;
}

/**
 * The step of a file from its path (segments separated by `/` or `\`): with `custom`, its regex
 * on the whole path; else the built-in rules, segment by segment from the file name up. Null when nothing matches.
 */
export function stepFromName(filePath: string, custom?: StepRule): StepMatch | null {
  if (custom) {
    const step = matchStep(filePath, custom.regex);
    return step === null ? null : { step, rule: custom.name };
  }
  const segments = filePath
    .split(/[\\/]/)
    .filter((s) => s !== '')
    .reverse();
  for (const segment of segments) {
    for (const rule of DEFAULT_STEP_RULES) {
      const step = matchStep(segment, rule.regex);
      if (step !== null) return { step, rule: rule.name };
    }
  }
  return null;
}
