/**
 * SQL highlighting with highlight.js: the core and the SQL grammar only (not the 190
 * languages of the full build). `highlight()` escapes its input, so its output contains no
 * markup but its own token spans; nothing else may be rendered as HTML.
 */
import hljs from 'highlight.js/lib/core';
import sql from 'highlight.js/lib/languages/sql';

hljs.registerLanguage('sql', sql);

/** Long predictions (a model that loops) are cut before highlighting: it is linear, but the page is not a text editor. */
const MAX_CHARS = 20_000;

export function highlightSql(text: string): string {
  const cut =
    text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) + `\n-- … ${text.length - MAX_CHARS} more characters` : text;
  return hljs.highlight(cut, { language: 'sql', ignoreIllegals: true }).value;
}
