/**
 * Every command's usage text, apart from the commands: `--help` prints them all without loading
 * any command (src/cli/main.ts imports each command only when it runs).
 */
import { EXPLOITS } from '../core/probe/exploits.ts';
import { DEFAULT_JUDGE_TIMEOUT_S } from './judge-flags.ts';
import { BUILTIN_PRESETS } from '../core/prompt/presets.ts';
import { AGGREGATION_REGISTRY } from '../core/rubric/aggregations.ts';

export const EVAL_USAGE = `usage: npm run --silent cli -- eval --predictions FILE|DIR|GLOB [--predictions ...] --gold FILE --db-root DIR|ZIP
    [--dataset FILE] [--timeout-s 30] [--workers N] [--read-only]
    [--metrics ex,soft-f1,r-ves,ts] [--ves-iterations 100] [--ts-seed 1] [--ts-size 8] [--out FILE]
    [--run-out FILE.json|FILE.parquet] [--reward "ex + 0.1 * format"] [--strict] [--no-reuse] [--shard K/N]
    [--gold-overlay FILE.json|FILE.jsonl|FILE.sql] [--out-dir DIR] [--cache DIR | --no-cache] [--engine sql.js]
    [--ex-rule bird|spider] [--no-version-check] [--exclude FILE.jsonl]
    --exclude  questions left out of every metric, one JSON line each: {"question_id", "reason", "author", "date"}`;

export const GOLD_CHECK_USAGE = `usage: npm run --silent cli -- gold-check --gold FILE --db-root DIR [--dataset FILE] [--workers N] [--out FILE]
    (--dataset gives question ids and texts: the count/list checks need the questions)
    exit 0: every gold ran (other issues are listed); 1: some gold fails (listed as "gold fails"); 2: nothing could be checked`;

export const HARNESS_USAGE = `usage: npm run --silent cli -- harness --completions FILE|DIR --gold FILE --dataset FILE --db-root DIR|ZIP
    [--from verl|lm-eval|inspect|prime-rl|skyrl|trl|prime-rl-traces] [--run-out FILE.json|FILE.parquet] [--timeout-s 30] [--workers N] [--metrics ex,soft-f1]
    [--preset ID]  the SQL of every completion taken by the preset's extraction rule (generate --help lists the presets)`;

export const SERIES_USAGE = `usage: npm run --silent cli -- series --completions DIR|FILE [--completions DIR|FILE ...] --gold FILE --dataset FILE --db-root DIR|ZIP
    [--from verl|lm-eval|inspect|prime-rl|skyrl|trl|prime-rl-traces] [--step-pattern REGEX] [--out FILE.json] [--csv FILE.csv] [--parquet FILE.parquet]
    [--series-out FILE.json] [--watch] [--poll-ms 1000] [--timeout-s 30] [--workers N] [--metrics ex,soft-f1]
    [--cache DIR | --no-cache] [--exclude FILE.jsonl]
    --exclude  questions left out of every step's numbers, one JSON line each: {"question_id", "reason", "author", "date"}`;

export const RUBRIC_USAGE = `usage: npm run --silent cli -- rubric --dataset FILE.jsonl|FILE.parquet --completions FILE.jsonl
    --judge-url URL --judge-model NAME [--judge-api-key-env VAR]
    [--aggregation ID[,ID...]|all (repeatable; default explicit,implicit,likert)] [--weighting as-given|paper|rar-integers]
    [--normalization positive|absolute] [--no-clip] [--retries 2] [--temperature 0]
    [--max-tokens 512] [--concurrency 4] [--http-retries 4] [--judge-timeout-s ${DEFAULT_JUDGE_TIMEOUT_S}] [--cache FILE.jsonl] [--out FILE]
  aggregations (id@version: formula; c = 1 when a criterion is met):
${AGGREGATION_REGISTRY.map((d) => `    ${`${d.id}@${d.version}`.padEnd(21)} ${d.formula}`).join('\n')}

usage: npm run --silent cli -- rubric check [--repeat K] [--swap] [--perturbed FILE.jsonl | --perturb]
    [--dataset FILE.jsonl|FILE.parquet] [--completions FILE.jsonl] --judge-url URL --judge-model NAME
    [--aggregation ID[,ID...]|all (default all)] [--perturb-model NAME] [--perturb-max-tokens 1024]
    and rubric's --judge-api-key-env, --weighting, --normalization, --no-clip, --retries, --temperature,
    --max-tokens, --concurrency, --http-retries, --judge-timeout-s, --cache, --out
  judge checks that need no people (any of them in one run):
    --repeat K      repeat consistency: the judge judges every criterion of every --completions sample K times
                    (K ≥ 2; each repeat has cache keys of its own, so every repeat asks the judge); per
                    criterion, per category and overall: the share of (sample, criterion) whose K verdicts differ
    --swap          position bias: each pair judged pairwise (rar-pairwise-v1) twice, A and B swapped; the share
                    of pairs whose winner changes with the order, and the first position's win rate (50 % unbiased);
                    pairs: every two samples of a row of --completions, else the (reference, perturbed) pairs
    --perturbed FILE  preferred vs perturbed: JSONL {"id"?, "prompt", "reference", "perturbed", "rubric"?} (without
                    "rubric", the --dataset row with that id gives it); both answers scored with the rubric under
                    each --aggregation: the share of pairs whose reference gets the higher reward, ties apart
    --perturb       the same, the perturbed answers written from each --dataset row's reference_answer by
                    --perturb-model (default the judge model) on the judge's server (prompt rar-perturb-v1)`;

export const STATS_USAGE = `usage: npm run --silent cli -- stats --run FILE [--k 1,4,8] [--seed 0] [--out FILE]
    [--csv FILE] [--prompts-json FILE] [--parquet FILE] [--frontier-jsonl FILE] [--dataset FILE]`;

export const COMPARE_USAGE = `usage: npm run --silent cli -- compare RUN_A RUN_B [--seed 0] [--resamples 10000] [--out FILE]`;

export const MERGE_USAGE = `usage: npm run --silent cli -- merge [--out FILE] [--run-out FILE] SHARD_FILE...
    each SHARD_FILE is the --out report or the --run-out run file of an \`eval --shard K/N\` run;
    --out joins the reports, --run-out the run files (give every shard's file of that kind)`;

export const REPORT_USAGE = `usage: npm run --silent cli -- report --run FILE [--compare FILE] [--series FILE] [--exclude FILE] [--db-root DIR|ZIP] --out FILE.html
    --run      a run file (eval --run-out, or a run exported by the app); the report's dashboard, items and RL view
    --compare  a second run file on the same questions: the report adds the comparison (the --run file is A)
    --series   a series file (series --series-out): the report adds the training run's steps and question buckets
    --exclude  questions left out of every metric of the --run and --compare runs, listed in the report
               (JSONL: {"question_id", "reason", "author", "date"} per line; a series file keeps its own)
    --db-root  the databases eval read (<db-root>/<db_id>/<db_id>.sqlite, or BIRD's dev.zip): each wrong sample
               is run again and the report keeps its first 20 rows of each side (budget: 2,000 samples, 4 MiB)`;

export const BATCH_USAGE = `usage: npm run --silent cli -- batch export --dataset FILE --gold FILE --db-root DIR --model NAME --out FILE.jsonl
    [--plan-out FILE] [--template bird-minidev-v1|reasoning-v1] [--n 1] [--seed 0] [--temperature 0]
    [--top-p 1] [--max-tokens 512] [--context-window N] [--sample-rows N] [--descriptions] [--logprobs] [--limit N]
    [--preset ID [--tables FILE] [--self-consistency]]
  npm run --silent cli -- batch import --plan FILE --output FILE [--output FILE ...] --dataset FILE --gold FILE --db-root DIR
    [--run-out FILE] [--missing-out FILE.jsonl] [--metrics ex,soft-f1] [--reward ex] [--timeout-s 30] [--workers N] [--tables FILE]
  export writes one OpenAI batch request per (question, sample), custom_id q<position>-s<sample>, seed + sample,
  and the plan (default: FILE with .plan.json for .jsonl); import matches run_batch output lines by custom_id,
  scores them as a generation run and lists missing and failed lines (--missing-out: those as a smaller batch).
  --preset ID: a single-turn policy preset (generate --help lists them) gives the messages, sampling, stops and
  prefill (instead of --template, --temperature, --top-p, --max-tokens, --context-window, --sample-rows,
  --descriptions); import scores with its extraction rule. --tables: as for generate (OmniSQL's schema).`;

export const PROBE_USAGE = `usage: npm run --silent cli -- probe --gold FILE --db-root DIR
    [--dataset FILE] [--out FILE] [--timeout-s 30] [--workers N] [--exploits ${EXPLOITS.map((e) => e.id).join(',')}]`;

export const GENERATE_USAGE = `usage: npm run --silent cli -- generate --endpoint URL --model NAME --preset ID --dataset FILE --gold FILE --db-root DIR|ZIP
    [--tables FILE] [--n N | --self-consistency] [--seed 0] [--limit N] [--concurrency 4] [--api-key-env VAR]
    [--timeout-s 30] [--workers N] [--out FILE] [--run-out FILE]
  runs every question (the first N with --limit) against an OpenAI-compatible chat server under a policy preset
  and scores it like eval; --tables: the dataset's tables.json (default: dev_tables.json beside --dataset, or
  in the folder above --db-root), needed by the presets that render OmniSQL's schema
  presets:
${BUILTIN_PRESETS.map((p) => `    ${p.id.padEnd(22)}${p.multiTurn ? 'multi-turn ' : 'single-turn'}  ${p.title}`).join('\n')}`;
