/**
 * `eval --predictions` inputs that are not plain files: a symbolic link in a folder or a glob is
 * followed (and named by its own path), one that dangles, loops or leads to something else is
 * refused by name, a FIFO or a device given as the file is named as such (never opened); a file
 * name with a tab or a terminal escape neither breaks summary.tsv nor reaches the terminal.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandPredictionInputs } from '../../src/cli/commands/eval-files.ts';
import { terminalName, terminalText } from '../../src/core/util/terminal-text.ts';
import { runCli } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';

const SEP = '\t----- bird -----\t';
const fresh = () => mkdtempSync(path.join(tmpdir(), 'wb-pred-inputs-'));
const fifo = (file: string) => execFileSync('mkfifo', [file]);

/** Three superhero questions of mini-dev: the gold file and a predictions file of their golds. */
function smallRun(dir: string): { gold: string; predictions: string } {
  const lines = readFileSync(sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'utf8')
    .split('\n')
    .filter((l) => l.endsWith('\tsuperhero'))
    .slice(0, 3);
  const gold = path.join(dir, 'gold.sql');
  writeFileSync(gold, lines.join('\n') + '\n');
  const predictions = JSON.stringify(Object.fromEntries(lines.map((l, i) => [String(i), l.replace('\t', SEP)])));
  return { gold, predictions };
}

describe('predictions files: links followed or named, never skipped; FIFOs and devices named', () => {
  it('a symbolic link to a regular file in a folder or a glob is evaluated under the link path', async () => {
    const dir = fresh();
    const elsewhere = path.join(fresh(), 'real.json');
    writeFileSync(elsewhere, '{}');
    writeFileSync(path.join(dir, 'a.json'), '{}');
    symlinkSync(elsewhere, path.join(dir, 'b.json'));
    mkdirSync(path.join(dir, 'sub.json')); // a subfolder: folders are not read recursively
    expect(await expandPredictionInputs([dir])).toEqual([path.join(dir, 'a.json'), path.join(dir, 'b.json')]);
    expect(await expandPredictionInputs([path.join(dir, 'b*')])).toEqual([path.join(dir, 'b.json')]);
    // A link given by name is followed too, and keeps its name.
    expect(await expandPredictionInputs([path.join(dir, 'b.json')])).toEqual([path.join(dir, 'b.json')]);
  });

  it('a link that dangles, loops or leads to a folder or a FIFO, and a FIFO entry, are refused by name with the reason', async () => {
    const cases: [string, (at: string, dir: string) => void, RegExp][] = [
      ['dangling.json', (at, dir) => symlinkSync(path.join(dir, 'gone.json'), at), /symbolic link to nothing/],
      ['loop.json', (at) => symlinkSync(at, at), /symbolic link in a loop/],
      ['folder.json', (at) => symlinkSync(fresh(), at), /symbolic link to a folder, not to a regular file/],
      [
        'pipe.json',
        (at) => {
          const target = path.join(fresh(), 'p');
          fifo(target);
          symlinkSync(target, at);
        },
        /symbolic link to a FIFO \(named pipe\)/,
      ],
      ['fifo.jsonl', (at) => fifo(at), /is a FIFO \(named pipe\), not a regular file/],
    ];
    for (const [name, make, why] of cases) {
      const dir = fresh();
      writeFileSync(path.join(dir, 'a.json'), '{}');
      make(path.join(dir, name), dir);
      for (const input of [dir, path.join(dir, '*')]) {
        const err = await expandPredictionInputs([input]).then(
          () => null,
          (e: Error) => e,
        );
        expect(err?.message, `${name} via ${input}`).toContain(path.join(dir, name));
        expect(err?.message, name).toMatch(why);
        expect(err?.message, name).toMatch(/remove it from the folder, or name the predictions files one by one/);
      }
    }
  });

  it('a FIFO or a device given as --predictions is named as such, not "not found", and is never opened', async () => {
    const dir = fresh();
    const pipe = path.join(dir, 'preds.json');
    fifo(pipe);
    const err = await expandPredictionInputs([pipe]).catch((e: Error) => e);
    expect(String(err)).toMatch(
      /preds\.json is a FIFO \(named pipe\), not a regular file: .*save the predictions to a file/,
    );
    expect(String(err)).not.toMatch(/not found/);
    await expect(expandPredictionInputs(['/dev/null'])).rejects.toThrow(
      /\/dev\/null is a character device, not a regular file/,
    );
    const dangling = path.join(dir, 'gone.json');
    symlinkSync(path.join(dir, 'nothing.json'), dangling);
    await expect(expandPredictionInputs([dangling])).rejects.toThrow(
      /gone\.json is a symbolic link that leads to nothing/,
    );

    // The CLI: exit 2 with the message; opening the FIFO would block the run (nobody writes it).
    const { gold } = smallRun(dir);
    const run = await runCli([
      'eval',
      '--predictions',
      pipe,
      '--gold',
      gold,
      '--db-root',
      sharedData('bird', 'databases'),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--predictions: .*preds\.json is a FIFO \(named pipe\), not a regular file/);
  }, 120_000);
});

describe('terminal output: one escaping for every string printed', () => {
  it('escapes ESC [ ... (CSI), OSC ... BEL, other C0 and C1 controls; a name escapes tabs and line breaks too', () => {
    expect(terminalText('run \x1b[2J\x1b]0;title\x07 done\t1\n')).toBe('run \\x1b[2J\\x1b]0;title\\x07 done\t1\n');
    expect(terminalText('a\x9b2Jb\x7f\x00\r')).toBe('a\\x9b2Jb\\x7f\\x00\\r');
    expect(terminalName('a\tb\nc\x1b[2J')).toBe('a\\tb\\nc\\x1b[2J');
    // Text without control characters is unchanged (Unicode, backslashes of Windows paths).
    expect(terminalName('C:\\preds\\é 雪.json')).toBe('C:\\preds\\é 雪.json');
  });

  it('eval --out-dir of a folder with a linked file, a tab and escapes in file names: summary.tsv keeps its columns, nothing raw reaches the terminal', async () => {
    const dir = fresh();
    const { gold, predictions } = smallRun(dir);
    const preds = path.join(dir, 'preds');
    mkdirSync(preds);
    const tabbed = 'a\tb.json';
    const escaped = 'c\x1b[2J\x1b]0;title\x07.json';
    writeFileSync(path.join(preds, tabbed), predictions);
    writeFileSync(path.join(preds, escaped), predictions);
    const elsewhere = path.join(fresh(), 'real.json');
    writeFileSync(elsewhere, predictions);
    symlinkSync(elsewhere, path.join(preds, 'link.json'));
    const out = path.join(dir, 'out');
    mkdirSync(out);
    const run = await runCli([
      'eval',
      '--predictions',
      preds,
      '--gold',
      gold,
      '--db-root',
      sharedData('bird', 'databases'),
      '--out-dir',
      out,
      '--workers',
      '1',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const rows = readFileSync(path.join(out, 'summary.tsv'), 'utf8').trimEnd().split('\n');
    expect(rows).toHaveLength(4);
    for (const r of rows) expect(r.split('\t')).toHaveLength(9);
    expect(rows.slice(1).map((r) => r.split('\t')[0])).toEqual([
      path.join(preds, 'a\\tb.json'),
      path.join(preds, 'c\\x1b[2J\\x1b]0;title\\x07.json'),
      path.join(preds, 'link.json'),
    ]);
    // Each file's three golds are right: EX 100.
    for (const r of rows.slice(1)) expect(r.split('\t').slice(1, 4)).toEqual(['3', '3', '100.00']);
    // eslint-disable-next-line no-control-regex -- no control character but tab and line feed
    expect(run.stdout + run.stderr).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(run.stdout).toContain(rows[2]);
  }, 180_000);
});
