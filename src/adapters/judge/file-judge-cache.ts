/**
 * JudgeCache in a JSON Lines file, for the CLI: `{"key", "text", "finishReason"}` per line,
 * appended as answers arrive, so an interrupted run keeps what it paid for and a second run
 * (another weighting, another aggregation) replays every judge answer without a call.
 */
import { appendFile, readFile } from 'node:fs/promises';
import { WorkbenchError } from '../../core/errors.ts';
import type { CachedAnswer, JudgeCache } from '../../core/rubric/judge-cache.ts';

export class FileJudgeCache implements JudgeCache {
  private constructor(
    private readonly file: string,
    private readonly map: Map<string, CachedAnswer>,
  ) {}

  /** Opens (or starts) the cache file; a line that is not a cache entry is an error naming it. */
  static async open(file: string): Promise<FileJudgeCache> {
    const map = new Map<string, CachedAnswer>();
    const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '';
      throw err;
    });
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch {
        throw new WorkbenchError(
          'BAD_JSON',
          'not a judge-cache line (invalid JSON); delete the file to start a new cache',
          `${file}:${i + 1}`,
        );
      }
      const e = v as { key?: unknown; text?: unknown; finishReason?: unknown };
      if (typeof e.key !== 'string' || typeof e.text !== 'string' || typeof e.finishReason !== 'string') {
        throw new WorkbenchError(
          'BAD_FORMAT',
          'not a judge-cache line (needs key, text, finishReason); delete the file to start a new cache',
          `${file}:${i + 1}`,
        );
      }
      map.set(e.key, { text: e.text, finishReason: e.finishReason });
    });
    return new FileJudgeCache(file, map);
  }

  get size(): number {
    return this.map.size;
  }

  async get(key: string): Promise<CachedAnswer | undefined> {
    return this.map.get(key);
  }

  async set(key: string, answer: CachedAnswer): Promise<void> {
    this.map.set(key, answer);
    await appendFile(this.file, JSON.stringify({ key, ...answer }) + '\n');
  }
}
