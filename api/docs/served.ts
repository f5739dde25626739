// The document and the /docs page as the skins service serves them: built on first use and again
// only if PUBLIC_URL changes (a port 0 is known after listen); the page once per language.
import type { Config } from '../config.ts';
import type { Lang } from '../http/i18n.ts';
import { renderDocsPage } from './docs-page.ts';
import { buildOpenApi, type OpenApiDocument } from './openapi.ts';
import type { DocsSource } from './routes.ts';

export function servedDocs(config: Config): DocsSource {
  let built: { publicUrl: string; doc: OpenApiDocument; html: Partial<Record<Lang, string>> } | null = null;
  const current = () => {
    if (built?.publicUrl !== config.publicUrl) built = { publicUrl: config.publicUrl, doc: buildOpenApi(config), html: {} };
    return built;
  };
  return {
    document: () => current().doc,
    page: (lang) => {
      const { doc, html } = current();
      return html[lang] ??= renderDocsPage(lang, doc);
    },
  };
}
