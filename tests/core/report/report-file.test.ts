/**
 * The offline report's data (core/report, docs/report.md): base64, the columnar packing of
 * samples, the one builder and its reader, with zlib (the CLI) and the platform's gzip streams
 * (the app and the page) on the same bytes; hostile run content never reaches the HTML as text.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { zlibGzip } from '../../../src/adapters/node/report-files.ts';
import { streamGzip } from '../../../src/adapters/gzip-stream.ts';
import { base64Decode, base64Encode } from '../../../src/core/util/base64.ts';
import { packSamples, StringTable, unpackSamples } from '../../../src/core/report/pack.ts';
import {
  openReportPayload,
  packReport,
  reportPayload,
  REPORT_VERSION,
  type ReportPayload,
} from '../../../src/core/report/payload.ts';
import {
  buildReportHtml,
  isReportHtml,
  readReportFile,
  reportDataOf,
  REPORT_DATA_PLACEHOLDER,
  unpackReportData,
} from '../../../src/core/report/report-file.ts';
import { runFileJson, toRunFile } from '../../../src/core/runfile/export.ts';
import { parseRunFile } from '../../../src/core/runfile/run-file.ts';
import type { RunFile, SampleRecord } from '../../../src/core/run/types.ts';
import { syntheticRunFile, syntheticSamples } from '../../robustness/synthetic-run.ts';
import { REPORT_TEMPLATE } from '../../helpers/report-template.ts';

const TEMPLATE = REPORT_TEMPLATE;

const HOSTILE = [
  '</script><script>window.pwned = 1</script>',
  '<!-- <script>',
  '<img src=x onerror="window.pwned = 2">',
  'javascript:alert(1)',
  '\u202Egnp.exe',
  '"\'&<>',
];

/** Every optional field a sample can have, nested ones included, with hostile text in its strings. */
function richSample(index: number, sample: number): SampleRecord {
  return {
    index,
    questionId: 1000 + index,
    dbId: `db${index % 3}`,
    difficulty: 'challenging',
    ex: 0,
    softF1: 0.25,
    rves: null,
    timeRatio: null,
    status: 'error',
    error: `prediction: ${HOSTILE[0]}`,
    mutatedDb: true,
    extraction: { rule: 'fenced-sql-last', thinkStripped: true },
    predRowCount: null,
    goldRowCount: 3,
    elapsedMs: 12.5,
    sample,
    sql: `SELECT '${HOSTILE.join("', '")}'`,
    goldSql: 'SELECT 1 -- </script>',
    completion: `<think>${HOSTILE[1]}</think>\n\`\`\`sql\nSELECT 1\n\`\`\``,
    format: 1,
    reward: -0.5,
    meanLogprob: -1.25,
    rubricScore: 0.75,
    resultKey: 'k1',
    predColumnCount: 2,
    goldColumnCount: 1,
    versionFeatures: [{ feature: 'round()', since: '3.43.0', where: 'gold' }],
    goldIssues: [{ kind: 'count-as-list', reason: HOSTILE[2]! }],
    ts: 0,
    goldOrderDependent: true,
    passesByRowOrder: false,
    generation: {
      prompt: [
        { role: 'system', content: HOSTILE[3]! },
        { role: 'user', content: HOSTILE[4]! },
      ],
      templateId: 'bird-cot',
      templateFingerprint: 'abc',
      fit: {
        limit: 4096,
        tokens: 812,
        counter: 'engine',
        fits: true,
        cut: { sampleRows: [], descriptions: [], tables: [] },
      },
      tokensIn: 812,
      tokensOut: 64,
      latencyMs: 420,
      finishReason: 'stop',
      seed: 7,
      engine: 'openai-compatible',
      model: HOSTILE[5]!,
    },
  };
}

function hostileRun(): RunFile {
  const samples = [...syntheticSamples({ questions: 20, samples: 3, seed: 4 }), richSample(20, 0), richSample(20, 1)];
  const file = syntheticRunFile(samples, 'hostile');
  return toRunFile({ ...file.run, name: `run ${HOSTILE.join(' ')}` }, samples, [
    { index: 20, questionId: 1020, dbId: 'db2', question: HOSTILE.join(' '), evidence: HOSTILE[1]! },
  ]);
}

const payloadOf = (runs: RunFile[]): ReportPayload =>
  reportPayload({ runs, compare: runs.length > 1, product: 'rlvr-workbench test', createdAt: '2026-03-02T10:00:00Z' });

describe('base64 (core/util/base64.ts)', () => {
  it('encodes as Buffer does and decodes back, every length up to 64 and 1 MiB', () => {
    for (const bytes of [...Array.from({ length: 65 }, (_, n) => randomBytes(n)), randomBytes(1 << 20)]) {
      const text = base64Encode(bytes);
      expect(text).toBe(Buffer.from(bytes).toString('base64'));
      expect(Buffer.from(base64Decode(text, 't')).equals(bytes)).toBe(true);
    }
  });

  it('refuses text that is not base64, naming where it came from', () => {
    for (const bad of ['abc', 'ab=c', 'a b=', '<!--'])
      expect(() => base64Decode(bad, 'data.txt')).toThrow(/^data\.txt: /);
  });
});

describe('packed samples (core/report/pack.ts)', () => {
  it('give back every sample exactly, key order, nested values and absent fields included', () => {
    const file = hostileRun();
    const table = new StringTable();
    const packed = packSamples(file.samples, table);
    const back = unpackSamples(JSON.parse(JSON.stringify(packed)), JSON.parse(JSON.stringify(table.strings)), 'x');
    expect(JSON.stringify(back)).toBe(JSON.stringify(file.samples));
    // Strings are kept once: far fewer distinct strings than string cells.
    const cells = Object.values(packed.columns)
      .filter((c) => c.kind !== 'v')
      .reduce((n, c) => n + c.cells.filter((v) => v !== null).length, 0);
    expect(table.strings.length).toBeLessThan(cells / 4);
    expect(packed.shapes.length).toBeGreaterThan(1);
  });

  it('refuse a table that lacks a string they refer to', () => {
    const table = new StringTable();
    const packed = packSamples(hostileRun().samples, table);
    expect(() => unpackSamples(packed, table.strings.slice(0, 2), 'r.html')).toThrow(
      /^r\.html: the packed samples refer to string/,
    );
  });
});

describe('the report file (core/report/report-file.ts)', () => {
  it('packs the runs into the template only as base64: hostile content never reaches the HTML as text', async () => {
    const file = hostileRun();
    const html = await buildReportHtml(TEMPLATE, payloadOf([file]), zlibGzip);
    const data = reportDataOf(html)!;
    expect(data).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    // The template, with its placeholder replaced by the data element and nothing else.
    expect(html).toBe(
      TEMPLATE.replace(
        REPORT_DATA_PLACEHOLDER,
        `<script type="application/octet-stream" id="rlvr-report-data">${data}</script>`,
      ),
    );
    for (const h of HOSTILE) expect(html).not.toContain(h);
    expect(html.match(/<script\b/g)).toHaveLength(2);
    expect(isReportHtml(html)).toBe(true);
  });

  it('reads back the same runs with either gzip (zlib in Node, the streams in a browser), equal to the run files read directly', async () => {
    const a = hostileRun();
    const b = toRunFile({ ...a.run, id: 'run-b', name: 'B' }, syntheticSamples({ questions: 21, samples: 2, seed: 5 }));
    for (const [write, read] of [
      [zlibGzip, streamGzip],
      [streamGzip, zlibGzip],
    ] as const) {
      const html = await buildReportHtml(TEMPLATE, payloadOf([a, b]), write);
      const back = await readReportFile(html, 'r.html', read);
      expect(back.compare).toBe(true);
      expect(back.product).toBe('rlvr-workbench test');
      expect(back.runs.map(runFileJson)).toEqual([a, b].map((f) => runFileJson(parseRunFile(runFileJson(f), 'f'))));
      // What the page reads (unvalidated) is the same runs, in the key order they were given in.
      const page = openReportPayload(await unpackReportData(reportDataOf(html)!, read, 'r.html'), 'r.html');
      expect(JSON.stringify(page.runs)).toBe(JSON.stringify([a, b]));
    }
  });

  it('refuses what it cannot read, naming the file: not a report, cut short, not gzip, a newer version, a bad sample', async () => {
    await expect(readReportFile('{"format": "rlvr-workbench-run"}', 'run.json', zlibGzip)).rejects.toThrow(
      /^run\.json: not a workbench report/,
    );
    const html = await buildReportHtml(TEMPLATE, payloadOf([hostileRun()]), zlibGzip);
    const data = reportDataOf(html)!;
    await expect(readReportFile(html.replace(data, data.slice(0, 401)), 'cut.html', zlibGzip)).rejects.toThrow(
      /^cut\.html: the data is not base64/,
    );
    await expect(readReportFile(html.replace(data, data.slice(0, 400)), 'cut.html', zlibGzip)).rejects.toThrow(
      /^cut\.html: the report's data is not gzip/,
    );
    const packed = packReport(payloadOf([hostileRun()]));
    const rewrite = async (p: unknown) => html.replace(data, base64Encode(await zlibGzip.gzip(JSON.stringify(p))));
    await expect(
      readReportFile(await rewrite({ ...packed, version: REPORT_VERSION + 1 }), 'new.html', zlibGzip),
    ).rejects.toThrow(/^new\.html: report version 2 was written by a newer workbench/);
    const ex = packed.runs[0]!.samples.columns.ex!;
    const broken = {
      ...packed,
      runs: [
        {
          ...packed.runs[0]!,
          samples: {
            ...packed.runs[0]!.samples,
            columns: { ...packed.runs[0]!.samples.columns, ex: { ...ex, cells: ex.cells.map(() => 2) } },
          },
        },
      ],
    };
    await expect(readReportFile(await rewrite(broken), 'bad.html', zlibGzip)).rejects.toThrow(
      /^bad\.html runs\[0\]: samples\[0\]\.ex must be one of/,
    );
  });

  it('refuses a comparison of a run with itself and a template that is not the report page', async () => {
    const a = hostileRun();
    expect(() => payloadOf([a, a])).toThrow(/are the same run \(id run-hostile\)/);
    await expect(buildReportHtml('<!doctype html><body></body>', payloadOf([a]), zlibGzip, 'tpl.html')).rejects.toThrow(
      /^tpl\.html: the report template must hold <!--rlvr-report-data--> once, found 0/,
    );
  });
});
