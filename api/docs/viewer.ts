// The files of the API viewer on /docs: Swagger UI (swagger-ui-dist, Apache-2.0, from
// node_modules: no CDN, so /docs works offline) and our start script. A request names a file of
// this fixed table or gets 404: no request text ever becomes a path on disk.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { prebuilt, sendPrebuilt, type Prebuilt } from './prebuilt.ts';

const resolve = createRequire(import.meta.url).resolve;
const dist = (name: string) => resolve(`swagger-ui-dist/${name}`);

// Koa adds the charset (utf-8) to these text types.
const JS = 'text/javascript';
const TEXT = 'text/plain';
const SOURCES: Record<string, { file: string; type: string }> = {
  'swagger-ui-bundle.js': { file: dist('swagger-ui-bundle.js'), type: JS },
  'swagger-ui.css': { file: dist('swagger-ui.css'), type: 'text/css' },
  // The licences the bundle names; Apache-2.0 asks for them beside what is handed out.
  'swagger-ui-bundle.js.LICENSE.txt': { file: dist('swagger-ui-bundle.js.LICENSE.txt'), type: TEXT },
  'LICENSE.swagger-ui.txt': { file: dist('LICENSE'), type: TEXT },
  'viewer.js': { file: fileURLToPath(new URL('viewer.js', import.meta.url)), type: JS },
};
/** The names /docs/assets/{file} answers. */
export const ASSET_NAMES = Object.keys(SOURCES);
/** The asset types, for the document. */
export const ASSET_TYPES = [...new Set(Object.values(SOURCES).map((s) => s.type))];

const loaded = new Map<string, Prebuilt>();

/** Read on first use (the bundle is 1.7 MB) and kept. */
function asset(name: string): Prebuilt | undefined {
  const source = Object.hasOwn(SOURCES, name) ? SOURCES[name] : undefined;
  if (!source) return undefined;
  let found = loaded.get(name);
  if (!found) {
    found = prebuilt(readFileSync(source.file), source.type);
    loaded.set(name, found);
  }
  return found;
}

/** GET /docs/assets/{file}: 304 when the client holds this version. */
export async function sendAsset(ctx: Context, name: string): Promise<void> {
  const found = asset(name);
  if (!found) throw new ApiError('route_not_found', { detail: 'no such file of the API viewer' });
  await sendPrebuilt(ctx, found);
}
