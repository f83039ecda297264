// Builds the offline report's template (docs/report.md): `vite build` of report.html with
// vite.report.config.ts (one HTML file, every script and stylesheet inlined), then the
// Content-Security-Policy written into it, with the inline script's sha256. The CLI's `report`
// command reads the template from dist-cli/report.html (built by `npm install`'s prepare
// script, scripts/build-cli.mjs, and again by scripts/cli.mjs when a source is newer); the
// app's build copies it into dist/ (vite.config.ts) for its "Export report" buttons.
// Plain JavaScript, like build-cli.mjs: it runs before anything is built.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Where the CLI reads the template; the app's build copies it from here. */
export const REPORT_TEMPLATE = path.join(ROOT, 'dist-cli', 'report.html');
/** What the template is made of: a file newer than it under these means it is stale. */
export const REPORT_INPUTS = ['src', 'workers', 'report.html', 'vite.report.config.ts', 'package-lock.json'].map((p) =>
  path.join(ROOT, p),
);
const SELF = fileURLToPath(import.meta.url);

const PLACEHOLDER = '<!--rlvr-report-data-->';
const SCRIPT_OPEN = '<script type="module" crossorigin>';

/** The newest modification time in a file or folder tree (0 when it does not exist). */
export function newestMtime(p) {
  let st;
  try {
    st = statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const e of readdirSync(p, { withFileTypes: true })) newest = Math.max(newest, newestMtime(path.join(p, e.name)));
  return newest;
}

/** True when the template is missing or older than a source it is built from. */
export function reportTemplateStale(file = REPORT_TEMPLATE) {
  let built;
  try {
    built = statSync(file).mtimeMs;
  } catch {
    return true;
  }
  return [...REPORT_INPUTS, SELF].some((p) => newestMtime(p) > built);
}

/**
 * The policy of every report: nothing may be fetched, framed, posted or connected to; the one
 * inline script runs by its hash; styles are inline (Svelte's and Chart.js's style attributes
 * need 'unsafe-inline', which a request cannot come from: fonts and images are not allowed
 * from anywhere but data: images); images only from data: URLs.
 */
export function reportCsp(scriptHash) {
  return [
    "default-src 'none'",
    `script-src '${scriptHash}'`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    "connect-src 'none'",
    "worker-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** The single-file build with its policy; throws when the page is not what the builder expects. */
export function withCsp(html) {
  const open = html.indexOf(SCRIPT_OPEN);
  if (open < 0 || html.indexOf(SCRIPT_OPEN, open + 1) >= 0)
    throw new Error(`report template: expected exactly one inlined ${SCRIPT_OPEN}`);
  const from = open + SCRIPT_OPEN.length;
  const to = html.indexOf('</script>', from);
  const script = html.slice(from, to);
  // The HTML parser would end or re-enter the script element at these.
  if (/<\/script|<!--|<script/i.test(script))
    throw new Error('report template: the inlined script holds HTML it must not');
  if ((html.match(/<script\b/g) ?? []).length !== 1) throw new Error('report template: a second <script> element');
  const parts = html.split(PLACEHOLDER);
  if (parts.length !== 2) throw new Error(`report template: expected ${PLACEHOLDER} once, found ${parts.length - 1}`);
  const hash = `sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}`;
  const meta = `<meta http-equiv="Content-Security-Policy" content="${reportCsp(hash)}" />`;
  const charset = '<meta charset="UTF-8" />';
  if (!html.includes(charset)) throw new Error(`report template: no ${charset}`);
  // First in <head> after the charset: the policy applies before any other element.
  return html.replace(charset, `${charset}\n    ${meta}`);
}

/**
 * `vite build` of the report page in a child process: a production build whoever calls it (a
 * test's environment sets NODE_ENV=test and VITEST_*, which would make a development build),
 * and --bypass-lock, since every caller builds into a folder of its own.
 */
function viteBuild(outDir) {
  const env = { ...process.env, NODE_ENV: 'production' };
  for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key];
  const vite = path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  const args = ['build', '--config', 'vite.report.config.ts', '--outDir', outDir, '--emptyOutDir'];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [vite, ...args, '--logLevel', 'warn', '--bypass-lock'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`vite build of the report template exited with ${code}:\n${output}`)),
    );
  });
}

/** Builds the template into `outFile` (written in place atomically: concurrent builds never see half a file). */
export async function buildReportTemplate(outFile = REPORT_TEMPLATE) {
  await mkdir(path.dirname(outFile), { recursive: true });
  const temp = await mkdtemp(path.join(path.dirname(outFile), '.report-'));
  try {
    await viteBuild(temp);
    const html = withCsp(await readFile(path.join(temp, 'report.html'), 'utf8'));
    await writeFile(path.join(temp, 'template.html'), html);
    await rename(path.join(temp, 'template.html'), outFile);
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  return outFile;
}

/** The template's path, built first when it is missing or stale. */
export async function ensureReportTemplate(outFile = REPORT_TEMPLATE) {
  if (reportTemplateStale(outFile)) await buildReportTemplate(outFile);
  return outFile;
}

if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  const t0 = performance.now();
  await buildReportTemplate();
  process.stderr.write(`built ${path.relative(ROOT, REPORT_TEMPLATE)} in ${Math.round(performance.now() - t0)} ms\n`);
}
