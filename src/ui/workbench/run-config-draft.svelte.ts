/**
 * The configuration part of a form that evaluates (the new-run form, the training-run forms):
 * timeout, read-only, metrics, the test suite's seed and size, the verdict cache and the fence of SQL extraction, as RunConfigFields shows them,
 * turned into a run's `RunConfig`.
 */
import { APP_MAX_TIMEOUT_S } from '../../core/eval/constants.ts';
import { METRICS, type MetricName } from '../../core/eval/executor.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig } from '../../core/run/types.ts';
import { DEFAULT_SUITE_SPEC } from '../../core/ts/suite.ts';

export class RunConfigDraft {
  #timeoutS = $state(DEFAULT_RUN_CONFIG.timeoutMs / 1000);
  #readOnly = $state(DEFAULT_RUN_CONFIG.readOnly);
  #metrics = $state.raw<MetricName[]>([...DEFAULT_RUN_CONFIG.metrics]);
  #fence = $state<RunConfig['fence']>(DEFAULT_RUN_CONFIG.fence);
  /** Metric ts: the suite's seed and size (the CLI's --ts-seed, --ts-size; docs/test-suite.md). */
  #tsSeed = $state(DEFAULT_SUITE_SPEC.seed);
  #tsSize = $state(DEFAULT_SUITE_SPEC.size);
  #verdictCache = $state(true);

  get timeoutS(): number {
    return this.#timeoutS;
  }
  get readOnly(): boolean {
    return this.#readOnly;
  }
  get metrics(): readonly MetricName[] {
    return this.#metrics;
  }
  get fence(): RunConfig['fence'] {
    return this.#fence;
  }
  get verdictCache(): boolean {
    return this.#verdictCache;
  }
  get tsSeed(): number {
    return this.#tsSeed;
  }
  get tsSize(): number {
    return this.#tsSize;
  }
  /** What keeps the configuration from being used, or null. */
  get configBlocker(): string | null {
    if (this.#metrics.length === 0) return 'Choose at least one metric.';
    if (!(this.#timeoutS > 0)) return 'The timeout must be more than 0 seconds.';
    if (this.#metrics.includes('ts')) {
      if (!Number.isInteger(this.#tsSeed) || this.#tsSeed < 0 || this.#tsSeed > 0xffffffff)
        return 'The test-suite seed must be an integer from 0 to 4294967295.';
      if (!Number.isInteger(this.#tsSize) || this.#tsSize < 1 || this.#tsSize > DEFAULT_SUITE_SPEC.candidates) {
        return `The test-suite size must be an integer from 1 to ${DEFAULT_SUITE_SPEC.candidates} (the candidate databases it is distilled from).`;
      }
    }
    return null;
  }

  setTimeoutS(s: number): void {
    if (Number.isFinite(s)) this.#timeoutS = Math.min(APP_MAX_TIMEOUT_S, s);
  }
  setReadOnly(on: boolean): void {
    this.#readOnly = on;
  }
  toggleMetric(m: MetricName, on: boolean): void {
    const next = on ? [...new Set([...this.#metrics, m])] : this.#metrics.filter((x) => x !== m);
    this.#metrics = METRICS.filter((x) => next.includes(x));
  }
  setFence(f: RunConfig['fence']): void {
    this.#fence = f;
  }
  setVerdictCache(on: boolean): void {
    this.#verdictCache = on;
  }
  setTsSeed(n: number): void {
    if (Number.isFinite(n)) this.#tsSeed = n;
  }
  setTsSize(n: number): void {
    if (Number.isFinite(n)) this.#tsSize = n;
  }

  toConfig(): RunConfig {
    return {
      ...DEFAULT_RUN_CONFIG,
      metrics: [...this.#metrics],
      timeoutMs: Math.round(this.#timeoutS * 1000),
      readOnly: this.#readOnly,
      fence: this.#fence,
      verdictCache: this.#verdictCache,
      // Metric ts: the suite's seed and size are part of the run (docs/test-suite.md).
      ...(this.#metrics.includes('ts')
        ? { suite: { ...DEFAULT_SUITE_SPEC, seed: this.#tsSeed, size: this.#tsSize } }
        : {}),
    };
  }
}
