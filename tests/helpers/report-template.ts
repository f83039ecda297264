import { REPORT_DATA_PLACEHOLDER } from '../../src/core/report/report-file.ts';

/** A report template as the single-file build has it: its policy, one inline script, the data placeholder. */
export const REPORT_TEMPLATE = `<!doctype html>
<html lang="en"><head><meta charset="UTF-8" />
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-x'" />
<script type="module" crossorigin>document.title = 'x';</script></head>
<body><div id="app"></div>
${REPORT_DATA_PLACEHOLDER}
</body></html>`;
