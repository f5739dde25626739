// The landing page at / (no selector): every public category with its counts, the totals
// and how to call the service.
import { html } from '../http/html.ts';
import type { Lang } from '../http/i18n.ts';
import { page, type PageFrame } from '../http/page.ts';
import type { Category, CategoryCounts } from './library.ts';

export interface CategorySummary extends CategoryCounts { alias: string; name: string; private: boolean }

export interface LibrarySummary { categories: CategorySummary[]; totals: { categories: number; files: number; calls: number } }

export function summarizeCategory(category: Category): CategorySummary {
  return { alias: category.alias, name: category.meta.name, private: category.meta.private, ...category.counts() };
}

export function summarize(categories: Category[], calls: number): LibrarySummary {
  const list = categories.map(summarizeCategory).sort((a, b) => a.alias.localeCompare(b.alias));
  return { categories: list, totals: { categories: list.length, files: list.reduce((sum, c) => sum + c.files, 0), calls } };
}

/** The URL that shows off a category: its videos when it holds only videos, else its images. */
export function exampleUrl(baseUrl: string, category: CategorySummary): string {
  const videosOnly = category.videos > 0 && category.images === 0;
  const selector = category.private ? (videosOnly ? 'smo' : 'sim') : (videosOnly ? 'vid' : 'img');
  return `${baseUrl}/?${selector}=${encodeURIComponent(category.alias)}`;
}

const TEXT = {
  en: {
    title: 'Skinfarm random media', intro: 'A random image or video from a category, by plain URL.',
    categories: 'public categories', files: 'media files', calls: 'total calls',
    category: 'Category', alias: 'Alias', fileCount: 'Files', landscape: 'Landscape', portrait: 'Portrait', example: 'Example',
    none: 'No public categories yet.', usage: 'Usage',
    image: 'a random image;', video: 'a random video', orientation: 'filters (square files only come unfiltered)', or: 'or',
    json: 'answers JSON with the file\'s permanent', jsonRest: ', size and orientation;', redirect: 'redirects there',
    privateIntro: 'Private categories:', privateImages: '(images) and', privateVideos: '(videos) with HTTP Basic, an', header: 'header or a token from', tokenRest: '',
  },
  zh: {
    title: 'Skinfarm 随机媒体', intro: '通过一个普通网址，从某个分类中随机取一张图片或一段视频。',
    categories: '个公开分类', files: '个媒体文件', calls: '次调用',
    category: '分类', alias: '别名', fileCount: '文件', landscape: '横向', portrait: '纵向', example: '示例',
    none: '还没有公开分类。', usage: '用法',
    image: '随机图片；', video: '随机视频', orientation: '按方向筛选（正方形文件只在不筛选时出现）', or: '或',
    json: '返回 JSON，包含文件的永久地址', jsonRest: '、大小和方向；', redirect: '重定向到该地址',
    privateIntro: '私有分类：', privateImages: '（图片）和', privateVideos: '（视频），需要 HTTP Basic、', header: '请求头，或来自', tokenRest: '的令牌',
  },
} satisfies Record<Lang, Record<string, string>>;

export function landingPage(frame: PageFrame, summary: LibrarySummary, baseUrl: string): string {
  const text = TEXT[frame.lang];
  const { categories, totals } = summary;
  const rows = categories.map((c) => {
    const example = exampleUrl(baseUrl, c);
    return html`<tr data-alias="${c.alias}"><td>${c.name}</td><td><code>${c.alias}</code></td>
<td class="n">${c.files}</td><td class="n">${c.landscape}</td><td class="n">${c.portrait}</td>
<td><a href="${example}">${example}</a></td></tr>`;
  });
  return page(frame, text.title, html`<h1>${text.title}</h1>
<p>${text.intro}</p>
<div class="totals">
<div><strong id="total-categories">${totals.categories}</strong>${text.categories}</div>
<div><strong id="total-files">${totals.files}</strong>${text.files}</div>
<div><strong id="total-calls">${totals.calls}</strong>${text.calls}</div>
</div>
<table id="categories"><thead><tr><th>${text.category}</th><th>${text.alias}</th><th class="n">${text.fileCount}</th><th class="n">${text.landscape}</th><th class="n">${text.portrait}</th><th>${text.example}</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="6">${text.none}</td></tr>`}</tbody></table>
<h2>${text.usage}</h2>
<ul>
<li><code>${baseUrl}/?img=&lt;alias&gt;</code> ${text.image} <code>vid=&lt;alias&gt;</code> ${text.video}</li>
<li><code>&amp;orientation=landscape</code> ${text.or} <code>portrait</code> ${text.orientation}</li>
<li><code>&amp;format=json</code> ${text.json} <code>url</code>${text.jsonRest} <code>&amp;redirect=1</code> ${text.redirect}</li>
<li>${text.privateIntro} <code>sim=&lt;alias&gt;</code> ${text.privateImages} <code>smo=&lt;alias&gt;</code> ${text.privateVideos} <code>X-Media-Password</code> ${text.header} <a href="/login">/login</a>${text.tokenRest}</li>
</ul>`);
}
