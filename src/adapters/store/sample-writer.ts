/**
 * Writes a run's samples as they finish, batched: every sample that arrives within ~50 ms goes
 * into one block record in one transaction (see SampleBlock in schema.ts for why blocks).
 */
import type { SampleRecord } from '../../core/run/types.ts';
import type { WorkbenchIdb } from './schema.ts';

interface SampleWriterOptions {
  batchMs?: number;
  /** Test double for a full disk: the batch that would pass this many samples fails with a QuotaExceededError. */
  simulateQuotaAfterSamples?: number;
  /** The first write error (e.g. quota), once. */
  onError?: (err: unknown) => void;
}

export class SampleWriter {
  private queue: SampleRecord[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown = null;
  private stored = 0;

  /** `firstBlock`: the number after the run's last stored block (see nextBlock()). */
  constructor(
    private readonly idb: WorkbenchIdb,
    private readonly runId: string,
    private block: number,
    private readonly opts: SampleWriterOptions = {},
  ) {}

  /** Samples committed so far. */
  get written(): number {
    return this.stored;
  }

  get error(): unknown {
    return this.failure;
  }

  push(sample: SampleRecord): void {
    if (this.failure) return;
    this.queue.push(sample);
    this.timer ??= setTimeout(() => void this.flush(), this.opts.batchMs ?? 50);
  }

  /** Commits what is queued; resolves when every earlier batch is committed (or failed). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return this.chain;
    this.chain = this.chain.then(async () => {
      if (this.failure) return;
      try {
        const limit = this.opts.simulateQuotaAfterSamples;
        if (limit !== undefined && this.stored + batch.length > limit) {
          throw new DOMException('simulated: the quota of this origin is exhausted', 'QuotaExceededError');
        }
        await this.idb.put('sampleBlocks', { runId: this.runId, block: this.block, samples: batch });
        this.block++;
        this.stored += batch.length;
      } catch (err) {
        this.failure = err;
        this.opts.onError?.(err);
      }
    });
    return this.chain;
  }

  /** Flushes and throws the write error, if any. */
  async close(): Promise<void> {
    await this.flush();
    if (this.failure) throw this.failure;
  }
}
