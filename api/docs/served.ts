// The document and the /docs page as the skins service serves them: the document built on first
// use and again only if PUBLIC_URL changes (a port 0 is known after listen); the page, a small
// frame around the viewer, per request (its header links depend on the request's host).
import type { Config } from '../config.ts';
import { docsPolicy, renderDocsPage } from './docs-page.ts';
import { buildOpenApi, type OpenApiDocument } from './openapi.ts';
import type { DocsSource } from './routes.ts';

export function servedDocs(config: Config): DocsSource {
  let built: { publicUrl: string; doc: OpenApiDocument; policy: string } | null = null;
  const current = () => {
    if (built?.publicUrl !== config.publicUrl) {
      const doc = buildOpenApi(config);
      built = { publicUrl: config.publicUrl, doc, policy: docsPolicy(doc) };
    }
    return built;
  };
  return {
    site: config,
    document: () => current().doc,
    page: (frame) => renderDocsPage(frame, current().doc),
    policy: () => current().policy,
  };
}
