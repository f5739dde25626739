// The document and the /docs page as the skins service serves them, over the route tables the
// composition root gives: the document built on first use and again only if PUBLIC_URL changes (a
// port 0 is known after listen), with its JSON, ETag and gzip form (613 KB of JSON serialised on
// every request once took 7 ms of the event loop each: issue #39); the page, a small frame around the viewer, per request (its header
// links depend on the request's host).
import type { Config } from '../config.ts';
import type { RouteTable } from '../http/route-table.ts';
import { docsPolicy, renderDocsPage } from './docs-page.ts';
import { buildOpenApi } from './openapi.ts';
import type { OpenApiDocument } from './openapi-types.ts';
import { prebuilt, type Prebuilt } from './prebuilt.ts';
import type { DocsSource } from './routes.ts';

export function servedDocs(config: Config, tables: readonly RouteTable[]): DocsSource {
  let built: { publicUrl: string; doc: OpenApiDocument; file: Prebuilt; policy: string } | null = null;
  const current = () => {
    if (built?.publicUrl !== config.publicUrl) {
      const doc = buildOpenApi(config, tables);
      built = { publicUrl: config.publicUrl, doc, file: prebuilt(Buffer.from(JSON.stringify(doc)), 'application/json; charset=utf-8'), policy: docsPolicy(doc) };
    }
    return built;
  };
  return {
    site: config,
    file: () => current().file,
    page: (frame) => renderDocsPage(frame, current().doc),
    policy: () => current().policy,
  };
}
