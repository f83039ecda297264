import { describe, expect, it } from 'vitest';
import {
  birdPredictionsJson,
  runFileJson,
  toBirdPredictions,
  toCsv,
  toRunFile,
} from '../../src/core/runfile/export.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { DEFAULT_RUN_CONFIG, type RunHeader, type SampleRecord } from '../../src/core/run/types.ts';
import { parsePredictions } from '../../src/core/formats/predictions.ts';
import { runHeader, sampleRecord, unstoredDataset } from '../helpers/run-records.ts';

const header: RunHeader = runHeader({
  id: 'r1',
  name: 'run',
  source: { kind: 'replay', predictions: { name: 'p.json', sha256: 'ab', bytes: 3 } },
  dataset: unstoredDataset({ id: 'd', name: 'mini', databases: { a: 'ef' } }),
  subset: { description: 'all', indices: [0, 2] },
  config: DEFAULT_RUN_CONFIG,
  executor: 'test',
});

const sample = (index: number, sql: string, extra: Partial<SampleRecord> = {}): SampleRecord =>
  sampleRecord({
    index,
    sample: 0,
    questionId: 100 + index,
    dbId: 'a',
    ex: 1,
    softF1: 1,
    reward: 1,
    extraction: { rule: 'bird-separator', thinkStripped: false },
    elapsedMs: 1.5,
    sql,
    ...extra,
  });

describe('run exports', () => {
  it('BIRD predictions keep gold positions: a gap gets an empty prediction, extra samples are left out', () => {
    const preds = toBirdPredictions([
      sample(2, 'SELECT 2'),
      sample(0, 'SELECT\n0'),
      sample(0, 'SELECT 9', { sample: 1 }),
    ]);
    expect(preds).toEqual({
      '0': 'SELECT\n0\t----- bird -----\ta',
      '1': '\t----- bird -----\tnot-in-run',
      '2': 'SELECT 2\t----- bird -----\ta',
    });
    // Read back by the core parser, positions and SQL are the same.
    expect(
      parsePredictions(birdPredictionsJson([sample(0, 'SELECT 1'), sample(1, ' ')]), 'p.json').map((p) => p.sql),
    ).toEqual(['SELECT 1', ' ']);
  });

  it('CSV quotes commas, quotes and newlines, one row per sample in (index, sample) order', () => {
    const csv = toCsv([sample(1, 'SELECT "x", 2'), sample(0, 'SELECT 1\nFROM t', { error: null, softF1: null })]);
    const lines = csv.split('\r\n');
    expect(lines[0]).toMatch(/^index,question_id,db_id,difficulty,sample,status,ex,soft_f1/);
    expect(lines[1]).toBe(
      // The empty cells after the SQL: rubric (5), the rubric aggregations (7), generation (3), overlay (3), version check (5).
      '0,100,a,simple,0,ok,1,,,,1,1,0,bird-separator,1,1,1.5,,"SELECT 1\nFROM t",SELECT 1,,,,,,,,,,,,,,,,,,,,,,,',
    );
    expect(lines[2]).toContain('"SELECT ""x"", 2"');
  });

  it("the device that ran: the header's run.device and each sample's in the run file, and gen_device* at the end of the CSV", () => {
    const gen = (device: string, deviceReason?: string, deviceDetail?: string): SampleRecord['generation'] => ({
      prompt: [{ role: 'user', content: 'q' }],
      templateId: 't',
      templateFingerprint: 'f',
      fit: {
        tokens: 10,
        limit: 100,
        counter: 'chars/4',
        fits: true,
        cut: { sampleRows: [], descriptions: [], tables: [] },
      },
      tokensIn: 10,
      tokensOut: 5,
      latencyMs: 3,
      finishReason: 'stop',
      seed: 1,
      engine: 'wllama',
      model: 'm.gguf',
      device,
      ...(deviceReason ? { deviceReason } : {}),
      ...(deviceDetail ? { deviceDetail } : {}),
    });
    const run: RunHeader = {
      ...header,
      source: { kind: 'generation', engine: 'wllama', model: 'm.gguf', template: 't' },
      device: { device: 'cpu', reason: "the WebGPU adapter lacks shader-f16, which llama.cpp's WebGPU backend needs" },
    };
    const file = toRunFile(run, [
      sample(0, 'SELECT 0', {
        generation: gen('cpu', "the WebGPU adapter lacks shader-f16, which llama.cpp's WebGPU backend needs"),
      }),
      sample(2, 'SELECT 2', {
        generation: gen('server', undefined, 'model Qwen/Qwen2.5-Coder-7B, system_fingerprint fp_1'),
      }),
    ]);
    const back = parseRunFile(runFileJson(file), 'run.json');
    expect(back).toEqual(file);
    expect(back.run.device).toEqual(run.device);
    expect(
      back.samples.map((s) => [s.generation?.device, s.generation?.deviceReason, s.generation?.deviceDetail]),
    ).toEqual([
      ['cpu', "the WebGPU adapter lacks shader-f16, which llama.cpp's WebGPU backend needs", undefined],
      ['server', undefined, 'model Qwen/Qwen2.5-Coder-7B, system_fingerprint fp_1'],
    ]);
    const lines = toCsv(file.samples).split('\r\n');
    // The overlay's and the version check's columns follow, empty here.
    expect(lines[0]).toMatch(
      /,gen_device,gen_device_reason,gen_device_detail,ex_corrected,soft_f1_corrected,gold_sql_corrected,version_check_sqlite,version_check_ex,version_check_soft_f1,version_check_differs,version_check_planner$/,
    );
    expect(lines[1]).toMatch(
      /,cpu,"the WebGPU adapter lacks shader-f16, which llama\.cpp's WebGPU backend needs",,,,,,,,,$/,
    );
    expect(lines[2]).toMatch(/,server,,"model Qwen\/Qwen2\.5-Coder-7B, system_fingerprint fp_1",,,,,,,,$/);
    // A header device without its fields is refused, naming the field.
    expect(() =>
      parseRunFile(JSON.stringify({ ...file, run: { ...run, device: { reason: null } } }), 'run.json'),
    ).toThrow(/run\.device/);
  });

  it('a run file round-trips through JSON and the boundary check', () => {
    const file = toRunFile(header, [sample(2, 'SELECT 2'), sample(0, 'SELECT 0')]);
    expect(file.samples.map((s) => s.index)).toEqual([0, 2]);
    expect(parseRunFile(runFileJson(file), 'run.json')).toEqual(file);
  });

  it.each([
    ['not JSON', '{', /run\.json:1:2: not valid JSON/],
    ['another format', '{"format":"x"}', /run\.json: not a run file/],
    [
      'a newer version',
      JSON.stringify({ format: 'rlvr-workbench-run', version: 2 }),
      /run file version 2 was written by a newer workbench/,
    ],
    [
      'a sample with ex 2',
      runFileJson(toRunFile(header, [sample(0, 'x', { ex: 2 as 0 })])),
      /samples\[0\]\.ex must be one of 0, 1/,
    ],
    [
      'a repeated sample',
      runFileJson(toRunFile(header, [sample(0, 'x'), sample(0, 'y')])),
      /samples\[1\] repeats sample 0 of question/,
    ],
    [
      'a header without status',
      JSON.stringify({ ...toRunFile(header, []), run: { ...header, status: 'weird' } }),
      /run\.status must be one of/,
    ],
  ])('refuses %s with a message naming the file and field', (_name, text, message) => {
    expect(() => parseRunFile(text, 'run.json')).toThrow(message);
  });
});
