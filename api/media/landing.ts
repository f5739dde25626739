// The landing page at / (no selector): every public category with its counts, the totals
// and how to call the service.
import { html, page } from './html.ts';
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

export function landingPage(summary: LibrarySummary, baseUrl: string): string {
  const { categories, totals } = summary;
  const rows = categories.map((c) => {
    const example = exampleUrl(baseUrl, c);
    return html`<tr data-alias="${c.alias}"><td>${c.name}</td><td><code>${c.alias}</code></td>
<td class="n">${c.files}</td><td class="n">${c.landscape}</td><td class="n">${c.portrait}</td>
<td><a href="${example}">${example}</a></td></tr>`;
  });
  return page('Skinfarm random media', html`<h1>Skinfarm random media</h1>
<p>A random image or video from a category, by plain URL.</p>
<div class="totals">
<div><strong id="total-categories">${totals.categories}</strong>public categories</div>
<div><strong id="total-files">${totals.files}</strong>media files</div>
<div><strong id="total-calls">${totals.calls}</strong>total calls</div>
</div>
<table id="categories"><thead><tr><th>Category</th><th>Alias</th><th class="n">Files</th><th class="n">Landscape</th><th class="n">Portrait</th><th>Example</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="6">No public categories yet.</td></tr>`}</tbody></table>
<h2>Usage</h2>
<ul>
<li><code>${baseUrl}/?img=&lt;alias&gt;</code> a random image; <code>vid=&lt;alias&gt;</code> a random video</li>
<li><code>&amp;orientation=landscape</code> or <code>portrait</code> filters (square files only come unfiltered)</li>
<li><code>&amp;format=json</code> answers JSON with the file's permanent <code>url</code>, size and orientation; <code>&amp;redirect=1</code> redirects there</li>
<li>Private categories: <code>sim=&lt;alias&gt;</code> (images) and <code>smo=&lt;alias&gt;</code> (videos) with HTTP Basic, an <code>X-Media-Password</code> header or a token from <a href="/login">/login</a></li>
</ul>`);
}
