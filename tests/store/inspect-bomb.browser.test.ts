/**
 * An Inspect-log bomb, in the app (Chromium, real zip.js): an Inspect `.eval` log of about 100 KB
 * whose one sample inflates to 100 MiB is refused by the zip's ratio bound before the sample is
 * read, through `readHarnessFile`, which the app's run import (`pairRunPredictions`) and its
 * training-run import (`readSeriesDump`) both call. The CLI's test is in
 * tests/robustness/hostile-zips.test.ts.
 */
import { BlobWriter, TextReader, ZipWriter } from '@zip.js/zip.js';
import { describe, expect, it } from 'vitest';
import { readHarnessFile } from '../../src/adapters/harness/read-harness.ts';

describe("the app's Inspect log reader within bounds", () => {
  it('a small .eval whose sample inflates to 100 MiB is refused as a zip bomb, naming the entry', async () => {
    const huge =
      '{"id": 1, "epoch": 1, "input": "q", "target": "SELECT 1", "output": {"choices": [{"message": {"content": "' +
      ' '.repeat(100 * 1024 * 1024) +
      '"}}]}}';
    const w = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false, level: 9 });
    await w.add('header.json', new TextReader('{}'));
    await w.add('samples/1_epoch_1.json', new TextReader(huge));
    const log = await w.close();
    expect(log.size).toBeLessThan(2 * 1024 * 1024);
    await expect(readHarnessFile('log.eval', log, null)).rejects.toThrow(
      /log\.eval: samples\/1_epoch_1\.json inflates .* to 100\.0 MiB .*zip bomb/,
    );
  }, 120_000);
});
