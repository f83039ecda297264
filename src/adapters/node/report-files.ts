/**
 * The offline report in Node: the product's name and version (package.json) and the report
 * template built beside the CLI (dist-cli/report.html, scripts/build-report.mjs), found from
 * this module wherever it runs (the CLI's bundle in dist-cli/, or the sources under tsx), and
 * gzip by zlib for the report's data.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { WorkbenchError } from '../../core/errors.ts';
import { InflationLimitError, type GzipPort } from '../../core/report/report-file.ts';

const PRODUCT = 'rlvr-workbench';

/** The repository (or installed package) root: the nearest folder up whose package.json is this product's. */
function productRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === PRODUCT) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new WorkbenchError('INTERNAL', `no package.json of ${PRODUCT} above ${import.meta.url}`);
    dir = up;
  }
}

/** `rlvr-workbench 0.1.0`. */
export function productName(): string {
  const pkg = JSON.parse(readFileSync(path.join(productRoot(), 'package.json'), 'utf8')) as { version: string };
  return `${PRODUCT} ${pkg.version}`;
}

/** The report template's text; a clear error when it was never built. */
export function readReportTemplate(): string {
  const file = path.join(productRoot(), 'dist-cli', 'report.html');
  if (!existsSync(file))
    throw new WorkbenchError(
      'MISSING_FILE',
      `the report template ${file} is not built: run npm run build:cli (npm install does it), or use npm run cli -- report, which builds it`,
    );
  return readFileSync(file, 'utf8');
}

const zip = promisify(gzip);
const unzip = promisify(gunzip);

export const zlibGzip: GzipPort = {
  gzip: async (text) => new Uint8Array(await zip(text, { level: 9 })),
  // zlib stops once the output passes maxOutputLength (ERR_BUFFER_TOO_LARGE): no more is held.
  gunzip: async (bytes, maxBytes) => {
    try {
      return (await unzip(bytes, maxBytes === undefined ? {} : { maxOutputLength: maxBytes })).toString('utf8');
    } catch (err) {
      if (maxBytes !== undefined && (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
        throw new InflationLimitError(maxBytes);
      throw err;
    }
  },
};
