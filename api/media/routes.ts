// The media service's routes: thin handlers over the selector, library, access and file modules.
import Router from '@koa/router';
import type { Context } from 'koa';
import { ApiError, isApiError } from '../../shared/errors.ts';
import { requestOrigin } from '../http/client-address.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import { pageLanguage } from '../http/i18n.ts';
import type { Grant, PrivateAccess } from './access.ts';
import type { MediaSettings } from './config.ts';
import type { CallCounter } from './counter.ts';
import { sendMediaFile } from './file-response.ts';
import { landingPage, summarize, summarizeCategory } from './landing.ts';
import type { Category, Library } from './library.ts';
import { loginPage, tokenPage } from './login-page.ts';
import type { LibraryScanner } from './scanner.ts';
import { parseSelection, type Selection } from './selector.ts';
import type { StickyPicks } from './sticky.ts';
import type { MediaFile } from './types.ts';

export interface MediaRouteDeps {
  library: Library;
  scanner: LibraryScanner;
  access: PrivateAccess;
  counter: CallCounter;
  limiter: RateLimiter;
  settings: MediaSettings;
  sticky: StickyPicks;
  version: string;
}

const FILE_PATH = /^([0-9a-f]{24})\.([a-z0-9]{2,5})$/;
const MAX_LOGIN_BODY = 8 * 1024;
/** A file that changed under the index is re-read and another one picked, a few times at most. */
const PICK_ATTEMPTS = 3;
const INDEXING_RETRY_SECONDS = 2;

/** MEDIA_PUBLIC_URL, else where this request arrived (X-Forwarded-* only with TRUST_PROXY). */
function baseUrl(ctx: Context, settings: MediaSettings): string {
  return settings.publicUrl ?? requestOrigin(ctx, ctx.state.viaTrustedProxy === true);
}

/** The file's permanent address; private files carry the request's token so the URL works alone. */
function permanentUrl(base: string, file: MediaFile, grant: Grant | null): string {
  const url = `${base}/f/${file.id}.${file.ext}`;
  return grant ? `${url}?token=${encodeURIComponent(grant.token)}` : url;
}

function describe(file: MediaFile, category: Category, url: string) {
  return {
    id: file.id,
    alias: category.alias,
    category: category.meta.name,
    file: file.name,
    url,
    type: file.format.type,
    mime: file.format.mime,
    width: file.width,
    height: file.height,
    orientation: file.orientation,
    bytes: file.bytes,
    private: category.meta.private,
  };
}

/** While the library is first indexed, what is not found yet may still come. */
function stillIndexing(): ApiError {
  return new ApiError('overloaded', { detail: 'the media library is still being indexed', retryAfter: INDEXING_RETRY_SECONDS });
}

/** The category a selection may reach: private selectors see private categories only, and the reverse. */
function selectedCategory(library: Library, selection: Selection): Category {
  const category = library.category(selection.alias);
  if (category?.indexed && category.meta.private === selection.private) return category;
  // Any other category answers the same while indexing, so the 503 does not tell private ones apart.
  if (library.indexing) throw stillIndexing();
  throw new ApiError('category_not_found', { detail: `no ${selection.private ? 'private' : 'public'} category ${JSON.stringify(selection.alias.slice(0, 80))}` });
}

async function answerSelection(ctx: Context, deps: MediaRouteDeps, selection: Selection): Promise<void> {
  const grant = selection.private ? await deps.access.require(ctx) : null;
  const category = selectedCategory(deps.library, selection);
  const base = baseUrl(ctx, deps.settings);
  const { sticky } = deps;
  const key = sticky.enabled ? sticky.key(ctx, selection) : undefined;
  // A range request goes on with the file this client last got here: a player reading on or seeking.
  const keptId = key && ctx.get('Range') ? sticky.get(key) : undefined;
  let kept = keptId ? deps.library.file(keptId) : undefined;
  for (let attempt = 0; attempt < PICK_ATTEMPTS; attempt++) {
    const file = kept ?? category.pick(selection.type, selection.orientation);
    kept = undefined;
    if (!file) {
      const filter = selection.orientation ? `${selection.orientation} ` : '';
      throw new ApiError('empty_category', { detail: `${selection.alias} has no ${filter}${selection.type}s` });
    }
    if (key) sticky.remember(key, file.id);
    const url = permanentUrl(base, file, grant);
    ctx.set('Cache-Control', 'no-store');
    if (selection.answer === 'json') {
      ctx.body = describe(file, category, url);
      return;
    }
    if (selection.answer === 'redirect') {
      ctx.redirect(url);
      return;
    }
    ctx.set('Content-Location', url);
    if (await sendMediaFile(ctx, file, deps.library.pathOf(file), { cache: 'no-store', ranges: sticky.enabled }) === 'sent') return;
    await deps.scanner.refreshFile(file.alias, file.name);
  }
  throw new ApiError('overloaded', { detail: 'the category is changing on disk; try again' });
}

async function readSmallBody(ctx: Context): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_LOGIN_BODY) throw new ApiError('payload_too_large', { detail: `the login form is at most ${MAX_LOGIN_BODY} bytes` });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The password from a login form or a JSON body `{"password": "..."}`. */
async function readLoginPassword(ctx: Context): Promise<string> {
  let password: unknown;
  if (ctx.is('application/x-www-form-urlencoded')) {
    password = new URLSearchParams(await readSmallBody(ctx)).get('password');
  } else if (ctx.is('application/json')) {
    const text = await readSmallBody(ctx);
    try {
      password = (JSON.parse(text) as { password?: unknown } | null)?.password;
    } catch {
      throw new ApiError('bad_request', { detail: 'the body is not valid JSON' });
    }
  } else {
    throw new ApiError('bad_request', { detail: 'send the password as a form field or as JSON {"password": "..."}' });
  }
  if (typeof password !== 'string' || !password) throw new ApiError('bad_request', { detail: 'password is missing' });
  return password;
}

export function mediaRouter(deps: MediaRouteDeps): Router {
  const { library, access, counter, settings } = deps;
  const router = new Router();
  const limit = deps.limiter.middleware({ name: 'media', limit: settings.rateLimit });
  const fileLimit = deps.limiter.middleware({ name: 'media-file', limit: settings.fileRateLimit });

  router.get('/', limit, async (ctx) => {
    const selection = parseSelection(ctx);
    if (selection) {
      await answerSelection(ctx, deps, selection);
      // Only answered calls count: a refused one (401, 403, 404, 416...) throws or sets its status.
      if (ctx.status < 400) counter.increment();
      return;
    }
    const summary = summarize(library.categories().filter((c) => !c.meta.private), await counter.total());
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = landingPage(pageLanguage(ctx), summary, baseUrl(ctx, settings));
  });

  router.get('/f/:file', fileLimit, async (ctx) => {
    const [, id, ext] = FILE_PATH.exec(ctx.params.file) ?? [];
    const file = id ? library.file(id) : undefined;
    const category = file && library.category(file.alias);
    if (!file || !category || file.ext !== ext) {
      if (id && library.indexing) throw stillIndexing();
      throw new ApiError('route_not_found', { detail: 'no media file at this address' });
    }
    if (category.meta.private) await access.require(ctx);
    if (await sendMediaFile(ctx, file, library.pathOf(file), { cache: category.meta.private ? 'private' : 'public', ranges: true }) === 'sent') return;
    await deps.scanner.refreshFile(file.alias, file.name);
    throw new ApiError('route_not_found', { detail: 'this file changed or was removed; ask for a new random file' });
  });

  // Public categories, and the private ones too for a request with valid credentials.
  router.get('/categories', limit, async (ctx) => {
    const grant = await access.optional(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = summarize(library.categories().filter((c) => grant || !c.meta.private), await counter.total());
  });

  router.get('/login', limit, (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = loginPage(pageLanguage(ctx));
  });

  router.post('/login', limit, async (ctx) => {
    const wantsJson = ctx.is('application/json') === 'application/json' || ctx.accepts('html', 'json') === 'json';
    let grant: Grant;
    try {
      grant = await access.login(await readLoginPassword(ctx), ctx.ip);
    } catch (err) {
      if (wantsJson || !isApiError(err)) throw err;
      // A browser posting the form gets the form again, with the reason, and the same status.
      ctx.status = err.status;
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(Math.max(1, Math.ceil(err.retryAfter))));
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = loginPage(pageLanguage(ctx), err.code);
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    const privateCategories = library.categories().filter((c) => c.meta.private).map(summarizeCategory);
    if (wantsJson) {
      ctx.body = { token: grant.token, expires_at: grant.expiresAt, categories: privateCategories.map((c) => c.alias) };
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = tokenPage(pageLanguage(ctx), grant, privateCategories, baseUrl(ctx, settings));
  });

  // Public categories only: health checks are unauthenticated, so private ones are not hinted at.
  router.get('/health', (ctx) => {
    const { totals } = summarize(library.categories().filter((c) => !c.meta.private), 0);
    ctx.body = { status: 'ok', service: 'media', version: deps.version, categories: totals.categories, files: totals.files };
  });

  return router;
}
