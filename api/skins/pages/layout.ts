// Small server-rendered HTML pages; every interpolated value goes through escapeHtml.

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Skinfarm</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:860px;margin:2rem auto;padding:0 1rem;color:#1d2430;background:#f7f8fa}
header{display:flex;gap:1rem;align-items:baseline;border-bottom:1px solid #d9dde3;margin-bottom:1.5rem}
header a{color:#2d5bd3;text-decoration:none} code,pre{background:#eef1f5;padding:.1rem .3rem;border-radius:4px}
.card{background:#fff;border:1px solid #d9dde3;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
.button{display:inline-block;background:#2d5bd3;color:#fff;padding:.45rem .9rem;border-radius:6px;text-decoration:none;border:0;font:inherit;cursor:pointer}
table{border-collapse:collapse} td,th{padding:.2rem .8rem .2rem 0;text-align:left;vertical-align:top}
</style></head>
<body><header><h1>Skinfarm</h1><a href="/">首页</a><a href="/status">状态</a><a href="/docs">文档</a></header>
${body}
</body></html>`;
}

export function renderMessagePage(title: string, message: string, link?: { href: string; label: string }): string {
  const action = link ? `<p><a class="button" href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a></p>` : '';
  return layout(title, `<div class="card"><h2>${escapeHtml(title)}</h2><p>${escapeHtml(message)}</p>${action}</div>`);
}
