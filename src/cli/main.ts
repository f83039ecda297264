#!/usr/bin/env node
/**
 * Node composition root: `npm run --silent cli -- <command> ...` (see docs/cli.md for every flag).
 * The only CLI file that imports `src/adapters`: it builds the Node host (src/cli/node-host.ts)
 * and hands it to the command.
 */
import { WorkbenchError, errorMessage, isWorkbenchError } from '../core/errors.ts';
import {
  BATCH_USAGE,
  COMPARE_USAGE,
  EVAL_USAGE,
  GENERATE_USAGE,
  GOLD_CHECK_USAGE,
  HARNESS_USAGE,
  MERGE_USAGE,
  PROBE_USAGE,
  REPORT_USAGE,
  RUBRIC_USAGE,
  SERIES_USAGE,
  STATS_USAGE,
} from './usage.ts';
import { escapeTerminalOutput } from './terminal.ts';
import type { NodeHost } from './node-host.ts';

interface Command {
  summary: string;
  usage: string;
  /**
   * The command's module, imported only when the command runs: the bundle splits each off
   * (scripts/build-cli.mjs), so `--help` loads none and a command loads only what it uses.
   */
  load(): Promise<{ run(argv: string[], host: NodeHost): Promise<number> }>;
}

/** One entry per command; each module exports `run`, its usage text is in usage.ts. */
const COMMANDS: Record<string, Command> = {
  eval: {
    summary: 'execute predictions and gold SQL against BIRD-layout databases and score them',
    usage: EVAL_USAGE,
    load: () => import('./commands/eval.ts'),
  },
  generate: {
    summary: 'run a policy preset (single- or multi-turn) against an OpenAI-compatible server and score it like eval',
    usage: GENERATE_USAGE,
    load: () => import('./commands/generate.ts'),
  },
  'gold-check': {
    summary:
      'gold self-test with gold checks: golds that fail, return no rows, count where a list is asked (or the reverse), use the date',
    usage: GOLD_CHECK_USAGE,
    load: () => import('./commands/gold-check.ts'),
  },
  harness: {
    summary: 'evaluate completions dumped by verl, lm-evaluation-harness or Inspect as runs (one per step)',
    usage: HARNESS_USAGE,
    load: () => import('./commands/harness.ts'),
  },
  series: {
    summary:
      'a training run: checkpoint dumps as one series, per-step curves, learned / forgotten questions, warnings; --watch follows a folder',
    usage: SERIES_USAGE,
    load: () => import('./commands/series.ts'),
  },
  rubric: {
    summary:
      'score completions of a RaR-style rubric dataset with an LLM judge; `rubric check`: repeat, position-bias and perturbed checks of the judge',
    usage: RUBRIC_USAGE,
    load: () => import('./commands/rubric.ts'),
  },
  stats: {
    summary: 'pass@k, maj@k, best-of-n and GRPO group statistics of a run (RL statistics)',
    usage: STATS_USAGE,
    load: () => import('./commands/stats.ts'),
  },
  compare: {
    summary: 'compare two runs: fixed / broken questions, EX difference with a 95% interval, McNemar',
    usage: COMPARE_USAGE,
    load: () => import('./commands/compare.ts'),
  },
  merge: {
    summary: 'join the outputs of `eval --shard K/N` runs into the report and run file of one run',
    usage: MERGE_USAGE,
    load: () => import('./commands/merge.ts'),
  },
  report: {
    summary: 'a run (and a comparison, a training run) as one HTML file that opens offline, from disk, in a browser',
    usage: REPORT_USAGE,
    load: () => import('./commands/report.ts'),
  },
  batch: {
    summary: 'generation on a cluster: export a plan as an OpenAI batch JSONL, import run_batch output as a run',
    usage: BATCH_USAGE,
    load: () => import('./commands/batch.ts'),
  },
  probe: {
    summary: 'reward-hacking probe: how many questions known exploit predictions win, official vs read-only',
    usage: PROBE_USAGE,
    load: () => import('./commands/probe.ts'),
  },
};

const USAGE = `usage: npm run --silent cli -- <command> [flags]
commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(11)}${c.summary}`)
  .join('\n')}

${Object.values(COMMANDS)
  .map((c) => c.usage)
  .join('\n\n')}`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE + '\n');
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) throw new WorkbenchError('BAD_OPTION', `unknown command ${JSON.stringify(name)}\n${USAGE}`);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(command.usage + '\n');
    return 0;
  }
  // Loaded with the command, after the usage texts: `--help` loads no adapter.
  const [{ createNodeHost }, loaded] = await Promise.all([import('../adapters/node/node-host.ts'), command.load()]);
  const host: NodeHost = createNodeHost();
  return loaded.run(rest, host);
}

// Every string printed goes through one escaping: no input can send escapes to the terminal.
escapeTerminalOutput();

/**
 * A reader that closed its end of the pipe (`eval ... | head -1`) is no failure of the command:
 * what would still be printed is dropped, and the work and its output files complete (an
 * unhandled EPIPE would kill the process after the evaluation, before the outputs are written).
 */
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`error: ${isWorkbenchError(err) ? err.message : errorMessage(err)}\n`);
    if (!isWorkbenchError(err) && err instanceof Error && err.stack) process.stderr.write(err.stack + '\n');
    process.exitCode = 2;
  },
);
