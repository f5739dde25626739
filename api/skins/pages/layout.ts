// Small server-rendered HTML pages; every interpolated value goes through escapeHtml. Each page
// is in one language (api/http/i18n.ts) and carries the switch to the other.
import { HTML_LANG, languageSwitch, type Lang } from '../../http/i18n.ts';

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const NAV: Record<Lang, { home: string; status: string; docs: string }> = {
  en: { home: 'Home', status: 'Status', docs: 'Docs' },
  zh: { home: '首页', status: '状态', docs: '文档' },
};

/** A whole page; `switchTarget` is where the language switch leads ('' = this page again). */
export function layout(lang: Lang, title: string, body: string, switchTarget = ''): string {
  const nav = NAV[lang];
  return `<!doctype html>
<html lang="${HTML_LANG[lang]}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Skinfarm</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:860px;margin:2rem auto;padding:0 1rem;color:#1d2430;background:#f7f8fa}
header{display:flex;gap:1rem;align-items:baseline;border-bottom:1px solid #d9dde3;margin-bottom:1.5rem}
header a{color:#2d5bd3;text-decoration:none} code,pre{background:#eef1f5;padding:.1rem .3rem;border-radius:4px}
.lang-switch{margin-left:auto;font-size:.9rem}
.card{background:#fff;border:1px solid #d9dde3;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
.button{display:inline-block;background:#2d5bd3;color:#fff;padding:.45rem .9rem;border-radius:6px;text-decoration:none;border:0;font:inherit;cursor:pointer}
table{border-collapse:collapse} td,th{padding:.2rem .8rem .2rem 0;text-align:left;vertical-align:top}
</style></head>
<body><header><h1>Skinfarm</h1><a href="/">${nav.home}</a><a href="/status">${nav.status}</a><a href="/docs">${nav.docs}</a>${languageSwitch(lang, switchTarget)}</header>
${body}
</body></html>`;
}

/** A page with one message and an optional button; its switch leads to the home page. */
export function renderMessagePage(lang: Lang, title: string, message: string, link?: { href: string; label: string }): string {
  const action = link ? `<p><a class="button" href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a></p>` : '';
  return layout(lang, title, `<div class="card"><h2>${escapeHtml(title)}</h2><p>${escapeHtml(message)}</p>${action}</div>`, '/');
}

/** Text for a <script>: JSON that cannot close the script element. */
export function scriptString(value: string): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}
