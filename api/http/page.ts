// The one look of every service's pages: a header that links the three services and the API
// docs, the language switch, and one stylesheet. Each page is in one language (./i18n.ts).
import { createHash } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { SERVICE_NAMES, type Config, type ServiceName } from '../config.ts';
import { requestOrigin } from './client-address.ts';
import { html, trustedHtml, type Html } from './html.ts';
import { HTML_LANG, pageLanguage, type Lang } from './i18n.ts';

/** Where each service's pages are: '' for the page's own service (links stay relative); absent when unknown. */
export type ServiceLinks = Partial<Record<ServiceName, string>>;

/** What a page's frame needs to know: its language, the other services' addresses and its own service. */
export interface PageFrame { lang: Lang; links: ServiceLinks; service: ServiceName }

/** The parts of the configuration that say where each service is reached. */
export type SiteAddresses = Pick<Config, 'services' | 'ports' | 'publicUrl' | 'publicUrlExplicit'>
  & { media: { publicUrl: string | null }; search: { publicUrl: string | null } };

/** The request's origin with another port, or null when the Host header names no usable origin. */
function sameHostAt(origin: string, port: number): string | null {
  try {
    const url = new URL(origin);
    url.port = String(port);
    return url.origin;
  } catch {
    return null;
  }
}

/**
 * Each service's address: its public URL when configured (PUBLIC_URL, MEDIA_PUBLIC_URL,
 * SEARCH_PUBLIC_URL); else, for a service of this process, the host this request came to with
 * that service's port. Through a trusted proxy that guess would name the proxy's host with a port
 * it does not serve, so such a service is left out, as is one running elsewhere.
 */
export function serviceLinks(site: SiteAddresses, ctx: Context, service: ServiceName): ServiceLinks {
  const configured: Record<ServiceName, string | null> = {
    skins: site.publicUrlExplicit ? site.publicUrl : null,
    media: site.media.publicUrl,
    search: site.search.publicUrl,
  };
  const origin = ctx.state.viaTrustedProxy === true ? null : requestOrigin(ctx, false);
  const links: ServiceLinks = {};
  for (const other of SERVICE_NAMES) {
    const guessed = origin !== null && site.services.includes(other) ? sameHostAt(origin, site.ports[other]) : null;
    const link = other === service ? '' : configured[other] ?? guessed;
    if (link !== null) links[other] = link;
  }
  return links;
}

/** The frame of a page of `service` answering this request. */
export const pageFrame = (ctx: Context, site: SiteAddresses, service: ServiceName): PageFrame =>
  ({ lang: pageLanguage(ctx), links: serviceLinks(site, ctx, service), service });

const NAV: Record<Lang, Record<ServiceName | Section | 'services' | 'language', string>> = {
  en: { skins: 'Skins', media: 'Media', search: 'Search', docs: 'API docs', status: 'Status', services: 'Services', language: 'Language' },
  zh: { skins: '皮肤', media: '媒体', search: '搜索', docs: 'API 文档', status: '状态', services: '服务', language: '语言' },
};

/**
 * The switch to the other language: links to `{target}?lang=…`, each language named in itself.
 * `target` is a constant path from the code ('' keeps the current page), never request input.
 */
function languageSwitch(current: Lang, target: string): Html {
  const link = (lang: Lang, label: string) => (lang === current
    ? html`<strong lang="${HTML_LANG[lang]}" aria-current="true">${label}</strong>`
    : html`<a href="${target}?lang=${lang}" hreflang="${HTML_LANG[lang]}" lang="${HTML_LANG[lang]}" id="lang-${lang}">${label}</a>`);
  return html`<nav class="lang-switch" aria-label="${NAV[current].language}">${link('en', 'English')} · ${link('zh', '中文')}</nav>`;
}

function header(frame: PageFrame, options: PageOptions): Html {
  const { lang, links, service } = frame;
  const nav = NAV[lang];
  const here = options.section ?? service;
  const link = (href: string, id: ServiceName | Section) => html`<a href="${href}"${id === here && html` aria-current="page"`}>${nav[id]}</a>`;
  // The API docs and the status page are the skins service's.
  const skins = links.skins;
  return html`<header class="site"><div class="bar">
<a class="brand" href="/">Skinfarm</a>
<nav class="services" aria-label="${nav.services}">${SERVICE_NAMES.map((id) => links[id] !== undefined && link(`${links[id]}/`, id))}</nav>
${skins !== undefined && html`<nav class="more">${link(`${skins}/docs`, 'docs')}${link(`${skins}/status`, 'status')}</nav>`}
${languageSwitch(lang, options.switchTarget ?? '')}
</div></header>`;
}

const STYLE = trustedHtml(`
:root{--ink:#1d2430;--muted:#5b6472;--line:#d9dde3;--paper:#fff;--ground:#f5f6f8;--accent:#2d5bd3;--code:#eef1f5;--bad:#c33}
*{box-sizing:border-box}
body{margin:0;font:15px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:var(--ground)}
a{color:var(--accent)}
header.site{background:var(--paper);border-bottom:1px solid var(--line)}
.bar,main{max-width:72rem;margin:0 auto;padding:0 1.25rem}
.bar{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1.25rem;min-height:3.25rem}
.brand{font-weight:700;font-size:1.15rem;color:var(--ink);text-decoration:none;margin-right:.5rem}
header nav{display:flex;gap:1rem}
header nav a{color:var(--muted);text-decoration:none;padding:.85rem 0 .7rem;border-bottom:3px solid transparent}
header nav a:hover{color:var(--ink)}
header nav a[aria-current="page"]{color:var(--ink);border-bottom-color:var(--accent)}
.lang-switch{margin-left:auto;font-size:.9rem;color:var(--muted)}
header .lang-switch a{padding:0;border:0}
main{padding-top:1.5rem;padding-bottom:3rem}
/* Plain elements are styled outside the API viewer only, which brings its own stylesheet. */
h1:where(:not(#api-viewer *)){font-size:1.6rem;margin:.5rem 0 1rem}
h2:where(:not(#api-viewer *)){font-size:1.25rem;margin:1.5rem 0 .5rem}
h3:where(:not(#api-viewer *)){font-size:1.05rem}
:is(code,pre):where(:not(#api-viewer *)){font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:.88em;background:var(--code);border-radius:4px}
code:where(:not(#api-viewer *)){padding:.1rem .3rem;overflow-wrap:break-word}
pre:where(:not(#api-viewer *)){padding:.75rem 1rem;overflow-x:auto}pre code{padding:0;background:none}
.card{background:var(--paper);border:1px solid var(--line);border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
.card>h1:first-child,.card>h2:first-child{margin-top:.25rem}
.button,button:where(:not(#api-viewer *)){display:inline-block;background:var(--accent);color:#fff;padding:.45rem .9rem;border-radius:6px;text-decoration:none;border:0;font:inherit;cursor:pointer}
input:where(:not(#api-viewer *)){font:inherit;padding:.35rem .5rem;border:1px solid var(--line);border-radius:6px}
label:where(:not(#api-viewer *)){margin-right:.5rem}
table:where(:not(#api-viewer *)){border-collapse:collapse;width:100%;margin:.5rem 0;background:var(--paper)}
:is(th,td):where(:not(#api-viewer *)){text-align:left;vertical-align:top;padding:.4rem .6rem;border-bottom:1px solid var(--line)}
table.plain{width:auto;background:none}table.plain th,table.plain td{border:0;padding:.15rem 1rem .15rem 0}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.totals{display:flex;gap:2rem;flex-wrap:wrap;margin:1rem 0}
.totals div{color:var(--muted)}.totals strong{display:block;font-size:1.8rem;color:var(--ink)}
.error{color:var(--bad)}
.example img{vertical-align:middle;margin-right:1rem}
/* The API viewer (its stylesheet loads after this one: the id makes these win). */
#api-viewer .swagger-ui .wrapper{padding:0;max-width:none}
#api-viewer .swagger-ui .information-container{display:none}
#api-viewer .swagger-ui .scheme-container{box-shadow:none;margin:0;padding:.75rem 0;border:1px solid var(--line);border-radius:8px}
#api-viewer .swagger-ui .scheme-container .schemes{padding:0 1.25rem}
#api-viewer .swagger-ui .filter-container .filter{padding:0}
#api-viewer .swagger-ui .operation-filter-input{margin:1rem 0 .5rem;border:1px solid var(--line);border-radius:6px}
`);

/** The CSP source that allows the inline stylesheet (a page with a Content-Security-Policy names it). */
export const STYLE_SOURCE = `'sha256-${createHash('sha256').update(STYLE.text).digest('base64')}'`;

type Section = 'docs' | 'status';

export interface PageOptions {
  /** Where the language switch leads ('' = this page again). */
  switchTarget?: string;
  /** The skins service's page this is, when the header names it (else the service is marked). */
  section?: Section;
  /** More of the head: a stylesheet, a script. */
  head?: Html;
}

/**
 * What every HTML page answers with, whichever service and route: no other site may frame it (a
 * framed media login form or account page could be clickjacked), and no browser may read it as
 * another type. A page with a Content-Security-Policy of its own (/docs) keeps it, and forbids
 * framing there itself (`frame-ancestors 'none'`).
 */
export const PAGE_HEADERS = {
  'Content-Security-Policy': "frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
} as const;

/**
 * Sets PAGE_HEADERS on every answer that is HTML, once the route (or the error handler) has
 * answered: the one place HTML pages get them, so a new page cannot forget them. The app shell
 * (api/http/app.ts) runs it on every service.
 */
export function pageHeaders(): Middleware {
  return async (ctx, next) => {
    await next();
    if (!ctx.response.is('html')) return;
    for (const [name, value] of Object.entries(PAGE_HEADERS)) {
      if (name === 'Content-Security-Policy' && ctx.response.get(name)) continue;
      ctx.set(name, value);
    }
  };
}

/** A whole page: the shared head, header and style around `body`. `title` is the whole title. */
export function page(frame: PageFrame, title: string, body: Html, options: PageOptions = {}): string {
  return html`<!doctype html>
<html lang="${HTML_LANG[frame.lang]}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><link rel="icon" href="data:,"><style>${STYLE}</style>${options.head}</head>
<body>${header(frame, options)}
<main>${body}</main>
</body></html>`.text;
}
