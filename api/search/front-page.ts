// The page at the search service's own address: what the service is, how to get a key and
// where the API is documented. JSON clients keep getting the API's 404 envelope there.
import { html, page } from '../media/html.ts';
import { TYPE_INFO } from './types.ts';

export interface FrontPageLinks {
  /** Where this service is reached (SEARCH_PUBLIC_URL, else the request's origin). */
  self: string;
  /** The skins service's interactive API documentation, which covers this API too. */
  docs: string;
}

export function frontPage(links: FrontPageLinks): string {
  const { self, docs } = links;
  const types = TYPE_INFO.map((t) => html`<tr><td><code>${t.type}</code></td><td>${t.description}</td><td><code>${t.example}</code></td></tr>`);
  return page('Skinfarm search', html`<h1>Skinfarm search</h1>
<p>One query, many sources: the operator's own data files, game accounts and offline analysers
(phone numbering plans, IP ranges, public suffixes, MAC vendors). A search runs a main pass, then a
cross pass on every phone, e-mail, name or account the first results hold, within one deadline.</p>
<h2>Get a key</h2>
<p>Searches need an API key in the <code>X-API-Key</code> header. The operator of this service
creates keys on the server:</p>
<pre><code>npm run search-keys -- create --name your-name --plan basic --duration 2m</code></pre>
<p>or through the admin API with <code>SEARCH_ADMIN_TOKEN</code>. The key (<code>sk_…</code>) is shown
once; keep it out of code and repositories.</p>
<h2>Search</h2>
<pre><code>curl "${self}/v1/search?query=ada.example@example.org" -H "X-API-Key: $KEY"
curl -X POST ${self}/v1/search -H "X-API-Key: $KEY" -H 'Content-Type: application/json' -d '{"query": "+1 202 555 0143", "type": "phone"}'</code></pre>
<table id="types"><thead><tr><th>Type</th><th>Accepted</th><th>Example</th></tr></thead><tbody>${types}</tbody></table>
<h2>More</h2>
<ul>
<li><a href="${docs}">API documentation</a> with try-it forms (served by the skins service)</li>
<li><a href="${self}/v1/types">/v1/types</a>: the query types as JSON</li>
<li><a href="${self}/health">/health</a>: version, index and sources, per data file</li>
</ul>`);
}
