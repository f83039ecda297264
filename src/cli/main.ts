#!/usr/bin/env node
/** Node composition root: `npm run --silent cli -- <command> ...` (see docs/cli.md for every flag). */
import { WorkbenchError, errorMessage, isWorkbenchError } from '../core/errors.ts';
import * as batchCommand from './commands/batch.ts';
import * as compareCommand from './commands/compare.ts';
import * as evalCommand from './commands/eval.ts';
import * as goldCheckCommand from './commands/gold-check.ts';
import * as mergeCommand from './commands/merge.ts';
import * as harnessCommand from './commands/harness.ts';
import * as probeCommand from './commands/probe.ts';
import * as reportCommand from './commands/report.ts';
import * as seriesCommand from './commands/series.ts';
import * as rubricCommand from './commands/rubric.ts';
import * as statsCommand from './commands/stats.ts';

interface Command {
  summary: string;
  usage: string;
  run(argv: string[]): Promise<number>;
}

/** One entry per command; each module exports `usage` and `run`. */
const COMMANDS: Record<string, Command> = {
  eval: { summary: 'execute predictions and gold SQL against BIRD-layout databases and score them', ...evalCommand },
  'gold-check': {
    summary:
      'gold self-test with gold checks: golds that fail, return no rows, count where a list is asked (or the reverse), use the date',
    ...goldCheckCommand,
  },
  harness: {
    summary: 'evaluate completions dumped by verl, lm-evaluation-harness or Inspect as runs (one per step)',
    ...harnessCommand,
  },
  series: {
    summary:
      'a training run: checkpoint dumps as one series, per-step curves, learned / forgotten questions, warnings; --watch follows a folder',
    ...seriesCommand,
  },
  rubric: { summary: 'score completions of a RaR-style rubric dataset with an LLM judge', ...rubricCommand },
  stats: { summary: 'pass@k, maj@k, best-of-n and GRPO group statistics of a run (RL statistics)', ...statsCommand },
  compare: {
    summary: 'compare two runs: fixed / broken questions, EX difference with a 95% interval, McNemar',
    ...compareCommand,
  },
  merge: {
    summary: 'join the outputs of `eval --shard K/N` runs into the report and run file of one run',
    ...mergeCommand,
  },
  report: {
    summary: 'a run (and a comparison, a training run) as one HTML file that opens offline, from disk, in a browser',
    ...reportCommand,
  },
  batch: {
    summary: 'generation on a cluster: export a plan as an OpenAI batch JSONL, import run_batch output as a run',
    ...batchCommand,
  },
  probe: {
    summary: 'reward-hacking probe: how many questions known exploit predictions win, official vs read-only',
    ...probeCommand,
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
  return command.run(rest);
}

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
