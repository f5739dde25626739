// The page at the search service's own address: what the service is, how to get a key and
// where the API is documented. JSON clients keep getting the API's 404 envelope there.
import { html } from '../http/html.ts';
import type { Lang } from '../http/i18n.ts';
import { page, type ServiceLinks } from '../http/page.ts';
import { TYPE_INFO } from './types.ts';

export interface FrontPageLinks {
  /** Where this service is reached (SEARCH_PUBLIC_URL, else the request's origin). */
  self: string;
  /** The skins service's interactive API documentation, which covers this API too. */
  docs: string;
  /** The services' pages for the header (api/http/page.ts serviceLinks). */
  services: ServiceLinks;
}

const TEXT = {
  en: {
    title: 'Skinfarm search',
    intro: `One query, many sources: the operator's own data files, game accounts and offline analysers
(phone numbering plans, IP ranges, public suffixes, MAC vendors). A search runs a main pass, then a
cross pass on every phone, e-mail, name or account the first results hold, within one deadline.`,
    keyTitle: 'Get a key',
    keyIntro: 'Searches need an API key in the X-API-Key header. The operator of this service creates keys on the server:',
    keyAdmin: 'or through the admin API with SEARCH_ADMIN_TOKEN. The key (sk_…) is shown once; keep it out of code and repositories.',
    searchTitle: 'Search',
    columns: ['Type', 'Accepted', 'Example'],
    moreTitle: 'More',
    docs: 'API documentation with try-it forms (served by the skins service)',
    types: 'the query types as JSON',
    health: 'version, index and sources, per data file',
  },
  zh: {
    title: 'Skinfarm 搜索',
    intro: `一次查询，多个数据源：运营者自己的数据文件、游戏账号以及离线分析器（电话号码规划、IP 段、公共后缀、MAC 厂商）。
一次搜索先做主查询，再对结果中的每个电话、邮箱、姓名或账号做交叉查询，全部在同一个截止时间内完成。`,
    keyTitle: '获取密钥',
    keyIntro: '搜索需要在 X-API-Key 请求头中提供 API 密钥。密钥由本服务的运营者在服务器上创建：',
    keyAdmin: '或通过带 SEARCH_ADMIN_TOKEN 的管理 API 创建。密钥（sk_…）只显示一次，请勿写入代码或仓库。',
    searchTitle: '搜索',
    columns: ['类型', '说明', '示例'],
    moreTitle: '更多',
    docs: '带在线试用表单的 API 文档（由 skins 服务提供）',
    types: '以 JSON 列出的查询类型',
    health: '版本、索引与数据源（按数据文件）',
  },
} satisfies Record<Lang, unknown>;

export function frontPage(lang: Lang, links: FrontPageLinks): string {
  const { self, docs, services } = links;
  const text = TEXT[lang];
  const types = TYPE_INFO.map((t) => html`<tr><td><code>${t.type}</code></td><td>${t.description}</td><td><code>${t.example}</code></td></tr>`);
  return page({ lang, links: services, service: 'search' }, text.title, html`<h1>${text.title}</h1>
<p>${text.intro}</p>
<h2>${text.keyTitle}</h2>
<p>${text.keyIntro}</p>
<pre><code>npm run search-keys -- create --name your-name --plan basic --duration 2m</code></pre>
<p>${text.keyAdmin}</p>
<h2>${text.searchTitle}</h2>
<pre><code>curl "${self}/v1/search?query=ada.example@example.org" -H "X-API-Key: $KEY"
curl -X POST ${self}/v1/search -H "X-API-Key: $KEY" -H 'Content-Type: application/json' -d '{"query": "+1 202 555 0143", "type": "phone"}'</code></pre>
<table id="types"><thead><tr>${text.columns.map((c) => html`<th>${c}</th>`)}</tr></thead><tbody>${types}</tbody></table>
<h2>${text.moreTitle}</h2>
<ul>
<li><a href="${docs}">${text.docs}</a></li>
<li><a href="${self}/v1/types">/v1/types</a>: ${text.types}</li>
<li><a href="${self}/health">/health</a>: ${text.health}</li>
</ul>`);
}
