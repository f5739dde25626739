// A tagged template that escapes every interpolated value unless it is already Html, so a
// page cannot forget to escape a category name or a URL.
import { HTML_LANG, languageSwitch, type Lang } from '../http/i18n.ts';

export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let text = strings[0];
  for (let i = 0; i < values.length; i++) text += render(values[i]) + strings[i + 1];
  return new Html(text);
}

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { max-width: 72rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }
  table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
  th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #8884; }
  td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
  code { background: #8882; padding: .1rem .3rem; border-radius: .2rem; word-break: break-all; }
  .totals { display: flex; gap: 2rem; flex-wrap: wrap; margin: 1rem 0; }
  .totals div { font-size: 1.1rem; } .totals strong { display: block; font-size: 1.8rem; }
  .error { color: #c33; } label, input, button { font-size: 1rem; } input { padding: .3rem; }
  .lang-switch { float: right; }`;

/**
 * A complete page in one language with the switch to the other: the shared style and an empty
 * icon (no /favicon.ico request, no console error).
 */
export function page(lang: Lang, title: string, body: Html): string {
  return html`<!doctype html>
<html lang="${HTML_LANG[lang]}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><link rel="icon" href="data:,"><style>${new Html(STYLE)}</style></head>
<body>${new Html(languageSwitch(lang))}${body}</body></html>`.text;
}
