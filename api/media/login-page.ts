// The login form (password in a POST body, never in a URL) and the page showing the token.
import { html, page } from './html.ts';
import { exampleUrl, type CategorySummary } from './landing.ts';
import type { Grant } from './access.ts';

export function loginPage(error?: string): string {
  return page('Private media login', html`<h1>Private media</h1>
<p>The password gives a signed link token; add <code>&amp;token=…</code> to private media URLs to embed them.</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/login">
<label>Password <input type="password" name="password" autocomplete="current-password" required autofocus></label>
<button type="submit">Get token</button>
</form>`);
}

export function tokenPage(grant: Grant, privateCategories: CategorySummary[], baseUrl: string): string {
  const expires = new Date(grant.expiresAt * 1000).toISOString();
  const links = privateCategories.map((c) => {
    const url = `${exampleUrl(baseUrl, c)}&token=${encodeURIComponent(grant.token)}`;
    return html`<li>${c.name}: <a href="${url}">${url}</a></li>`;
  });
  return page('Private media token', html`<h1>Your token</h1>
<p><code id="token">${grant.token}</code></p>
<p>Valid until <time datetime="${expires}">${expires}</time>.</p>
${links.length ? html`<ul>${links}</ul>` : html`<p>There are no private categories.</p>`}`);
}
