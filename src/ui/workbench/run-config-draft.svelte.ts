/**
 * The configuration part of a form that evaluates (the new-run form, the training-run forms):
 * timeout, read-only, metrics, the test suite's seed and size, the verdict cache and the fence of SQL extraction, as RunConfigFields shows them,
 * turned into a run's `RunConfig`.
 */
import { APP_MAX_TIMEOUT_S } from '../../core/eval/constants.ts';
import { METRICS, type MetricName } from '../../core/eval/executor.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig } from '../../core/run/types.ts';
import { DEFAULT_SUITE_SPEC } from '../../core/ts/suite.ts';

/** The configuration's own fields (the chosen metrics are `$state.raw`, apart). */
interface ConfigFields {
  /** Per-query timeout in seconds (at most APP_MAX_TIMEOUT_S). */
  timeoutS: number;
  readOnly: boolean;
  fence: RunConfig['fence'];
  /** Metric ts: the suite's seed and size (the CLI's --ts-seed, --ts-size; docs/test-suite.md). */
  tsSeed: number;
  tsSize: number;
  verdictCache: boolean;
}

export class RunConfigDraft {
  #s = $state<ConfigFields>({
    timeoutS: DEFAULT_RUN_CONFIG.timeoutMs / 1000,
    readOnly: DEFAULT_RUN_CONFIG.readOnly,
    fence: DEFAULT_RUN_CONFIG.fence,
    tsSeed: DEFAULT_SUITE_SPEC.seed,
    tsSize: DEFAULT_SUITE_SPEC.size,
    verdictCache: true,
  });
  #metrics = $state.raw<MetricName[]>([...DEFAULT_RUN_CONFIG.metrics]);

  /** The configuration as the form shows it, read-only: the methods below change it. */
  get config(): Readonly<ConfigFields> {
    return this.#s;
  }
  get metrics(): readonly MetricName[] {
    return this.#metrics;
  }
  /** What keeps the configuration from being used, or null. */
  get configBlocker(): string | null {
    if (this.#metrics.length === 0) return 'Choose at least one metric.';
    if (!(this.#s.timeoutS > 0)) return 'The timeout must be more than 0 seconds.';
    if (this.#metrics.includes('ts')) {
      if (!Number.isInteger(this.#s.tsSeed) || this.#s.tsSeed < 0 || this.#s.tsSeed > 0xffffffff)
        return 'The test-suite seed must be an integer from 0 to 4294967295.';
      if (!Number.isInteger(this.#s.tsSize) || this.#s.tsSize < 1 || this.#s.tsSize > DEFAULT_SUITE_SPEC.candidates) {
        return `The test-suite size must be an integer from 1 to ${DEFAULT_SUITE_SPEC.candidates} (the candidate databases it is distilled from).`;
      }
    }
    return null;
  }

  setTimeoutS(s: number): void {
    if (Number.isFinite(s)) this.#s.timeoutS = Math.min(APP_MAX_TIMEOUT_S, s);
  }
  setReadOnly(on: boolean): void {
    this.#s.readOnly = on;
  }
  toggleMetric(m: MetricName, on: boolean): void {
    const next = on ? [...new Set([...this.#metrics, m])] : this.#metrics.filter((x) => x !== m);
    this.#metrics = METRICS.filter((x) => next.includes(x));
  }
  setFence(f: RunConfig['fence']): void {
    this.#s.fence = f;
  }
  setVerdictCache(on: boolean): void {
    this.#s.verdictCache = on;
  }
  setTsSeed(n: number): void {
    if (Number.isFinite(n)) this.#s.tsSeed = n;
  }
  setTsSize(n: number): void {
    if (Number.isFinite(n)) this.#s.tsSize = n;
  }

  toConfig(): RunConfig {
    return {
      ...DEFAULT_RUN_CONFIG,
      metrics: [...this.#metrics],
      timeoutMs: Math.round(this.#s.timeoutS * 1000),
      readOnly: this.#s.readOnly,
      fence: this.#s.fence,
      verdictCache: this.#s.verdictCache,
      // Metric ts: the suite's seed and size are part of the run (docs/test-suite.md).
      ...(this.#metrics.includes('ts')
        ? { suite: { ...DEFAULT_SUITE_SPEC, seed: this.#s.tsSeed, size: this.#s.tsSize } }
        : {}),
    };
  }
}
