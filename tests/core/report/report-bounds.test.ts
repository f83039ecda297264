/**
 * The report's bounds (core/report/limits.ts, docs/report.md "Bounds"): a text longer than the
 * bound is cut with a visible marker and the report says so; data or HTML past its bound is
 * refused when the report is made; reading a report back inflates its data within the zips'
 * rule (100 to 1 past 4 MiB) and an absolute bound, with either gzip, naming the file. Small
 * bounds are passed where the real ones would need hundreds of MiB; the gzip bomb is real-size.
 */
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { zlibGzip } from '../../../src/adapters/node/report-files.ts';
import { streamGzip } from '../../../src/adapters/gzip-stream.ts';
import { cutText, REPORT_LIMITS, utf8Length, type ReportLimits } from '../../../src/core/report/limits.ts';
import { reportPayload, type ReportPayload } from '../../../src/core/report/payload.ts';
import {
  buildReport,
  buildReportHtml,
  readReportFile,
  REPORT_DATA_PLACEHOLDER,
} from '../../../src/core/report/report-file.ts';
import { base64Encode } from '../../../src/core/util/base64.ts';
import type { RunFile } from '../../../src/core/run/types.ts';
import { syntheticRunFile, syntheticSamples } from '../../robustness/synthetic-run.ts';
import { REPORT_TEMPLATE } from '../../helpers/report-template.ts';

const MiB = 1024 * 1024;
const payloadOf = (runs: RunFile[]): ReportPayload =>
  reportPayload({ runs, compare: false, product: 'rlvr-workbench test', createdAt: '2026-03-02T10:00:00Z' });

/** A synthetic run whose first sample's SQL is `sqlChars` characters long. */
function runWithLongSql(sqlChars: number): RunFile {
  const samples = syntheticSamples({ questions: 5, samples: 2, seed: 3 });
  samples[0] = { ...samples[0]!, sql: `SELECT '${'x'.repeat(sqlChars - 9)}'` };
  return syntheticRunFile(samples, 'long');
}

/** A report page whose data element holds `gz` (gzip bytes), as a forged report would. */
const reportWith = (gz: Uint8Array) =>
  REPORT_TEMPLATE.replace(
    REPORT_DATA_PLACEHOLDER,
    `<script type="application/octet-stream" id="rlvr-report-data">${base64Encode(gz)}</script>`,
  );

/** Gzip of `mib` MiB of zeros, written a MiB at a time (the inflated bytes are never held). */
async function zerosGzip(mib: number): Promise<Uint8Array> {
  const gz = createGzip({ level: 9 });
  const parts: Buffer[] = [];
  gz.on('data', (b: Buffer) => parts.push(b));
  const zeros = Buffer.alloc(MiB);
  for (let i = 0; i < mib; i++) if (!gz.write(zeros)) await once(gz, 'drain');
  gz.end();
  await once(gz, 'end');
  return new Uint8Array(Buffer.concat(parts));
}

describe('report bounds: texts, data and HTML when made', () => {
  it('cuts a text longer than 64 KiB with a visible marker, says so in the payload, and leaves the rest whole', async () => {
    const run = runWithLongSql(100 * 1024);
    const { html, cut } = await buildReport(REPORT_TEMPLATE, payloadOf([run]), zlibGzip);
    expect(cut).toEqual({ count: 1, maxChars: 64 * 1024 });
    for (const gzip of [zlibGzip, streamGzip]) {
      const back = await readReportFile(html, 'r.html', gzip);
      expect(back.textsCut).toEqual({ count: 1, maxChars: 65536 });
      const sql = back.runs[0]!.samples[0]!.sql;
      expect(sql).toBe(run.samples[0]!.sql.slice(0, 65536) + '… (36,864 characters more)');
      expect(back.runs[0]!.samples.slice(1)).toEqual(run.samples.slice(1));
    }
    // A run without a long text: nothing cut, no textsCut in the report.
    const whole = await buildReport(REPORT_TEMPLATE, payloadOf([runWithLongSql(64 * 1024)]), zlibGzip);
    expect(whole.cut).toBeNull();
    expect((await readReportFile(whole.html, 'w.html', zlibGzip)).textsCut ?? null).toBeNull();
  });

  it('never cuts inside a surrogate pair; counts UTF-8 bytes as the encoder does', () => {
    expect(cutText('ab😀cd', 3)).toBe('ab… (4 characters more)');
    expect(cutText('abcdef', 3)).toBe('abc… (3 characters more)');
    for (const s of ['', 'abc', 'é', '雪', '😀', 'a\ud800b', `x${'é😀雪'.repeat(50)}`])
      expect(utf8Length(s), s).toBe(new TextEncoder().encode(s).length);
  });

  it('refuses data past its bound, and HTML past its bound, with the size, the bound and what to do', async () => {
    const payload = payloadOf([syntheticRunFile(syntheticSamples({ questions: 200, samples: 4, seed: 9 }), 'big')]);
    const small = (over: Partial<ReportLimits>): ReportLimits => ({ ...REPORT_LIMITS, ...over });
    await expect(
      buildReportHtml(REPORT_TEMPLATE, payload, zlibGzip, 't', small({ dataBytes: 10_000 })),
    ).rejects.toThrow(
      /the report's data would be .*, more than the 9\.8 KiB a report may carry: make a report of fewer samples/,
    );
    await expect(buildReportHtml(REPORT_TEMPLATE, payload, zlibGzip, 't', small({ htmlBytes: 2_000 }))).rejects.toThrow(
      /the report would be .* KiB, more than the 2\.0 KiB a report may be: make a report of fewer samples/,
    );
    // Data that compresses past the ratio would be refused when read back: refused when made.
    await expect(
      buildReportHtml(REPORT_TEMPLATE, payload, zlibGzip, 't', small({ ratio: 2, ratioFloorBytes: 1_000 })),
    ).rejects.toThrow(/more than the 2 to 1 that reading a report back allows/);
    // The same payload within the real bounds is made and read back.
    const html = await buildReportHtml(REPORT_TEMPLATE, payload, zlibGzip);
    expect((await readReportFile(html, 'ok.html', zlibGzip)).runs[0]!.samples).toHaveLength(800);
  });
});

describe('report bounds: a report read back inflates within the zips rule', () => {
  it('a 100 MiB gzip bomb in a report (about 100 KB) is refused at 100 to 1, with either gzip, naming the file', async () => {
    const gz = await zerosGzip(100);
    expect(gz.length).toBeLessThan(MiB);
    const html = reportWith(gz);
    for (const gzip of [zlibGzip, streamGzip]) {
      const err = await readReportFile(html, 'bomb.html', gzip).catch((e: Error) => e);
      expect(String(err)).toMatch(
        /bomb\.html: the report's data inflates .* KiB to more than (4\.0|\d+\.\d) MiB \(100 to 1 past 4\.0 MiB, .*gzip bomb\); nothing was read: make the report again/,
      );
      expect(String(err)).not.toMatch(/JSON|not gzip/);
    }
  }, 60_000);

  it('the absolute bound applies whatever the ratio (small bounds), and a real report under both reads back', async () => {
    const json = JSON.stringify({ format: 'rlvr-workbench-report', pad: 'a'.repeat(50_000) });
    const gz = await zlibGzip.gzip(json);
    const limits: ReportLimits = { ...REPORT_LIMITS, dataBytes: 20_000, ratio: 1_000_000 };
    for (const gzip of [zlibGzip, streamGzip])
      await expect(readReportFile(reportWith(gz), 'big.html', gzip, limits)).rejects.toThrow(
        /^big\.html: the report's data inflates .* to more than 19\.5 KiB \(the 19\.5 KiB a report may carry\)/,
      );
    const real = await buildReportHtml(REPORT_TEMPLATE, payloadOf([runWithLongSql(100)]), zlibGzip);
    for (const gzip of [zlibGzip, streamGzip])
      expect((await readReportFile(real, 'r.html', gzip)).runs[0]!.samples).toHaveLength(10);
  });
});
