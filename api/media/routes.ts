// The media service's routes: thin handlers over the selector, library, access and file modules.
import type { Context } from 'koa';
import { ApiError, isApiError, type Localized } from '../../shared/errors.ts';
import { readBody } from '../http/body.ts';
import { requestOrigin } from '../http/client-address.ts';
import { pageFrame, type SiteAddresses } from '../http/page.ts';
import { between, flag, inPath, inQuery, text, type Params } from '../http/params.ts';
import type { Route, RouteTable } from '../http/route-table.ts';
import { headers, HTML, html, json, octets, requires } from '../docs/fragments.ts';
import { envelopeError, ref } from '../docs/schemas.ts';
import { MEDIA_PRIVATE, HEALTH_DOC, ROOT_DOC } from '../docs/shared-routes.ts';
import type { Config } from '../config.ts';
import type { Grant, PrivateAccess } from './access.ts';
import type { MediaSettings } from './config.ts';
import type { CallCounter } from './counter.ts';
import type { SendResult } from './file-response.ts';
import { isTransient } from './fs-errors.ts';
import { landingPage, summarize, summarizeCategory } from './landing.ts';
import type { Category, Library } from './library.ts';
import { MAX_PAGE, PAGE_LIMIT, pageLinks, pageOf } from './listing.ts';
import { loginPage, tokenPage } from './login-page.ts';
import type { LibraryScanner } from './scanner.ts';
import { filterOf, parseSelection, PICK_PARAMS, SELECTORS, type Selection } from './selector.ts';
import type { OrientationFilter } from './orientation.ts';
import { choose } from './picker.ts';
import { MEDIA_SCHEMAS } from './schemas.ts';
import type { StickyPicks } from './sticky.ts';
import type { MediaFile, MediaType } from './types.ts';
import { VARIANT_PARAMS, variantOptions, type VariantMaker, type VariantOptions } from './variants.ts';

export interface MediaRouteDeps {
  library: Library;
  scanner: LibraryScanner;
  access: PrivateAccess;
  counter: CallCounter;
  settings: MediaSettings;
  sticky: StickyPicks;
  variants: VariantMaker;
  version: string;
  /** Where the other services are, for the pages' header. */
  site: SiteAddresses;
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

/**
 * The file's permanent address, or its variant's (the options in canonical order, so one variant
 * has one address a CDN keeps); private files carry the request's token so the URL works alone.
 */
function permanentUrl(base: string, file: MediaFile, grant: Grant | null, variant?: VariantOptions): string {
  const query = [variant?.query, grant && `token=${encodeURIComponent(grant.token)}`].filter(Boolean).join('&');
  const url = `${base}/f/${file.id}.${file.ext}`;
  return query ? `${url}?${query}` : url;
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
  return new ApiError('overloaded', { detail: { zh: '媒体库仍在建立索引', en: 'the media library is still being indexed' }, retryAfter: INDEXING_RETRY_SECONDS });
}

/** What the server may not read: a 500 no cache keeps (the scanner's log line names the error). */
function unreadable(what: Localized): ApiError {
  return new ApiError('internal_error', { detail: { zh: `服务器无法读取${what.zh}`, en: `${what.en} cannot be read on the server` } });
}

const THIS_FILE: Localized = { zh: '该文件', en: 'this file' };
/** The words of a selection's type and filter in Chinese (the English ones are the values). */
const TYPE_ZH: Record<MediaType, string> = { image: '图片', video: '视频' };
const ORIENTATION_ZH: Record<OrientationFilter, string> = { landscape: '横向', portrait: '纵向' };

/**
 * After a file was not sent: a changed one is read again (the caller picks another or answers
 * 404); one the server cannot read is marked so (true); a shortage of file descriptors is a 503.
 */
async function settleUnsent(deps: MediaRouteDeps, file: MediaFile, result: Exclude<SendResult, 'sent'>): Promise<boolean> {
  if (result === 'stale') {
    await deps.scanner.refreshFile(file.alias, file.name);
    return false;
  }
  if (isTransient(result.failed)) throw new ApiError('overloaded', { detail: { zh: '服务器暂时无法打开更多文件', en: 'the server cannot open more files right now' }, retryAfter: 1 });
  deps.scanner.markUnreadable(file, result.failed);
  return true;
}

/** The category an alias names for a selector: private selectors see private categories only, and the reverse. */
function selectedCategory(library: Library, isPrivate: boolean, alias: string): Category {
  const category = library.category(alias);
  const visible = category?.indexed === true && category.meta.private === isPrivate;
  // A category never read whole has no known privacy either: any selector hears the same failure.
  if (library.fault(alias) && (visible || !category?.indexed)) throw unreadable({ zh: '该分类', en: 'this category' });
  if (visible) return category!;
  // Any other category answers the same while indexing, so the 503 does not tell private ones apart.
  if (library.indexing) throw stillIndexing();
  const name = JSON.stringify(alias.slice(0, 80));
  throw new ApiError('category_not_found', {
    detail: isPrivate
      ? { zh: `没有名为 ${name} 的私有分类`, en: `no private category ${name}` }
      : { zh: `没有名为 ${name} 的公开分类`, en: `no public category ${name}` },
  });
}

/** The categories a selection picks among: those it names, or every one its selector reaches (`all`). */
function selectedCategories(library: Library, selection: Selection): Category[] {
  if (selection.aliases) return selection.aliases.map((alias) => selectedCategory(library, selection.private, alias));
  // Before the first scan ends `all` would be a partial pick: it waits as an unknown alias does.
  if (library.indexing) throw stillIndexing();
  return library.categories().filter((category) => category.meta.private === selection.private);
}

interface Chosen {
  files: MediaFile[];
  /** orientation=auto found no file of the client's orientation and took any file. */
  fallback: boolean;
}

/** The files a selection answers, each file of its categories equally likely (not each category). */
function chooseFiles(categories: Category[], selection: Selection): Chosen {
  const { type, orientation, count = 1, seed } = selection;
  const options = { accept: filterOf(selection), seed };
  const files = choose(categories.map((category) => category.pool(type, orientation)), count, options);
  if (files.length > 0 || !selection.orientationAuto) return { files, fallback: false };
  return { files: choose(categories.map((category) => category.pool(type)), count, options), fallback: true };
}

/** Why no file answers: none of them can be read (the server's failure), or none matches. */
function noFile(categories: Category[], selection: Selection): ApiError {
  const typeZh = TYPE_ZH[selection.type];
  const narrowed = filterOf(selection) !== undefined;
  // Files are there but none can be read: the server's failure, not an empty category (unreadable
  // files have no known size or kind, so with filters nothing can be said of them).
  if (!narrowed && categories.some((category) => category.unreadable(selection.type) > 0)) {
    return unreadable({ zh: `该分类的${typeZh}`, en: `the ${selection.type}s of this category` });
  }
  // After auto's fallback to any file nothing of any orientation matched.
  const orientation = selection.orientationAuto ? undefined : selection.orientation;
  return new ApiError('empty_category', {
    detail: {
      zh: `${selection.alias} 中没有${narrowed ? '符合条件的' : ''}${orientation ? ORIENTATION_ZH[orientation] : ''}${typeZh}`,
      en: `${selection.alias} has no ${orientation ? `${orientation} ` : ''}${selection.type}s${narrowed ? ' that pass the filters' : ''}`,
    },
  });
}

/** format=json and format=text: one file as before, or with count a list; orientation=auto says what it judged. */
function describeChosen(ctx: Context, library: Library, selection: Selection, chosen: Chosen, urlOf: (file: MediaFile) => string): void {
  const urls = chosen.files.map(urlOf);
  if (selection.answer === 'text') {
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = `${urls.join('\n')}\n`;
    return;
  }
  const items = chosen.files.map((file, i) => describe(file, library.category(file.alias)!, urls[i]));
  const judged = selection.orientationAuto ? { orientation_chosen: selection.orientation, orientation_fallback: chosen.fallback } : {};
  ctx.body = selection.count === undefined ? { ...items[0], ...judged } : { files: items, ...judged };
}

async function answerSelection(ctx: Context, deps: MediaRouteDeps, selection: Selection, variant: VariantOptions | undefined): Promise<void> {
  const grant = selection.private ? await deps.access.require(ctx) : null;
  const categories = selectedCategories(deps.library, selection);
  const base = baseUrl(ctx, deps.settings);
  if (selection.orientationAuto) {
    // The answer depends on these headers: caches must keep one per value.
    ctx.vary('Sec-CH-UA-Mobile');
    ctx.vary('User-Agent');
    ctx.set('Accept-CH', 'Sec-CH-UA-Mobile');
  }
  const { sticky } = deps;
  const key = sticky.enabled ? sticky.key(ctx, selection) : undefined;
  // A range request goes on with the file this client last got here: a player reading on or seeking.
  const keptId = key && ctx.get('Range') ? sticky.get(key) : undefined;
  let kept = keptId ? deps.library.file(keptId) : undefined;
  if (kept?.unreadable) kept = undefined;
  let lastUnreadable = false;
  for (let attempt = 0; attempt < PICK_ATTEMPTS; attempt++) {
    const chosen = kept ? { files: [kept], fallback: false } : chooseFiles(categories, selection);
    kept = undefined;
    const [file] = chosen.files;
    if (!file) throw noFile(categories, selection);
    if (key) sticky.remember(key, file.id);
    const url = permanentUrl(base, file, grant, variant);
    if (selection.answer === 'json' || selection.answer === 'text') {
      describeChosen(ctx, deps.library, selection, chosen, (one) => permanentUrl(base, one, grant, variant));
      return;
    }
    if (selection.answer === 'redirect') {
      ctx.redirect(url);
      return;
    }
    ctx.set('Content-Location', url);
    const sent = await deps.variants.send(ctx, file, deps.library.pathOf(file), variant, { cache: 'no-store', ranges: sticky.enabled });
    if (sent === 'sent') return;
    lastUnreadable = await settleUnsent(deps, file, sent);
  }
  throw lastUnreadable
    ? unreadable({ zh: '选中的文件', en: 'the files picked' })
    : new ApiError('overloaded', { detail: { zh: '该分类正在磁盘上变动，请重试', en: 'the category is changing on disk; try again' } });
}

async function readSmallBody(ctx: Context): Promise<string> {
  return (await readBody(ctx, MAX_LOGIN_BODY, { zh: '登录表单', en: 'the login form' })).toString('utf8');
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
      throw new ApiError('bad_request', { detail: { zh: '请求体不是有效的 JSON', en: 'the body is not valid JSON' } });
    }
  } else {
    throw new ApiError('bad_request', { detail: { zh: '请以表单字段或 JSON {"password": "..."} 发送密码', en: 'send the password as a form field or as JSON {"password": "..."}' } });
  }
  if (typeof password !== 'string' || !password) throw new ApiError('bad_request', { detail: { zh: '缺少密码', en: 'password is missing' } });
  return password;
}

async function randomOrLanding(ctx: Context, deps: MediaRouteDeps, params: Params): Promise<void> {
  const { library, counter, settings } = deps;
  const selection = parseSelection(ctx, params);
  if (selection) {
    await answerSelection(ctx, deps, selection, variantOptions(params, selection.type));
    // Only answered calls count: a refused one (401, 403, 404, 416...) throws or sets its status.
    if (ctx.status < 400) counter.increment();
    return;
  }
  const summary = summarize(library.categories().filter((c) => !c.meta.private), await counter.total());
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = landingPage(pageFrame(ctx, deps.site, 'media'), summary, baseUrl(ctx, settings));
}

async function fileById(ctx: Context, deps: MediaRouteDeps, params: Params): Promise<void> {
  const { library, access } = deps;
  const [, id, ext] = FILE_PATH.exec(params.file as string) ?? [];
  const file = id ? library.file(id) : undefined;
  const category = file && library.category(file.alias);
  // No media file has the extension json (formats.ts), so <id>.json is free for the file's description.
  const info = ext === 'json';
  if (!file || !category || (file.ext !== ext && !info)) {
    if (id && library.indexing) throw stillIndexing();
    throw new ApiError('route_not_found', { detail: { zh: '此地址没有媒体文件', en: 'no media file at this address' } });
  }
  const grant = category.meta.private ? await access.require(ctx) : null;
  if (file.unreadable || library.fault(file.alias)) throw unreadable(THIS_FILE);
  if (info) {
    // What the random route's format=json says of this file; a private one's url carries a token.
    ctx.set('Cache-Control', 'no-store');
    ctx.body = describe(file, category, permanentUrl(baseUrl(ctx, deps.settings), file, grant));
    return;
  }
  const variant = variantOptions(params, file.format.type);
  const sent = await deps.variants.send(ctx, file, library.pathOf(file), variant, { cache: category.meta.private ? 'private' : 'public', ranges: true });
  if (sent === 'sent') return;
  if (await settleUnsent(deps, file, sent)) throw unreadable(THIS_FILE);
  throw new ApiError('route_not_found', { detail: { zh: '该文件已更改或被删除，请重新随机获取一个文件', en: 'this file changed or was removed; ask for a new random file' } });
}

/** A page of a category's files (listing.ts), each described as the random route's format=json does. */
async function categoryFiles(ctx: Context, { library, access, settings }: MediaRouteDeps, params: Params): Promise<void> {
  const alias = params.alias as string;
  const known = library.category(alias);
  // Only a public category answers without credentials: any other alias asks for them, so a 401 does not tell private categories from unknown ones.
  const grant = known && !known.meta.private ? null : await access.require(ctx);
  const category = selectedCategory(library, known?.meta.private ?? true, alias);
  const base = baseUrl(ctx, settings);
  const page = pageOf(category.listing(), params.page as number, params.limit as number);
  ctx.set('Link', pageLinks(new URL(`${base}${ctx.path}${ctx.search}`), page));
  ctx.body = {
    alias: category.alias, category: category.meta.name, private: category.meta.private,
    page: page.page, limit: page.limit, total: page.total, pages: page.pages,
    files: page.files.map((file) => describe(file, category, permanentUrl(base, file, grant))),
  };
}

// Public categories, and the private ones too for a request with valid credentials.
async function categories(ctx: Context, { library, access, counter }: MediaRouteDeps): Promise<void> {
  const grant = await access.optional(ctx);
  ctx.body = summarize(library.categories().filter((c) => grant || !c.meta.private), await counter.total());
}

async function login(ctx: Context, { library, access, settings, site }: MediaRouteDeps): Promise<void> {
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
    ctx.body = loginPage(pageFrame(ctx, site, 'media'), err);
    return;
  }
  const privateCategories = library.categories().filter((c) => c.meta.private).map(summarizeCategory);
  if (wantsJson) {
    ctx.body = { token: grant.token, expires_at: grant.expiresAt, categories: privateCategories.map((c) => c.alias) };
    return;
  }
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = tokenPage(pageFrame(ctx, site, 'media'), grant, privateCategories, baseUrl(ctx, settings));
}

// Public categories only: health checks are unauthenticated, so private ones are not hinted at.
function health(ctx: Context, { library, version }: MediaRouteDeps): void {
  const { totals } = summarize(library.categories().filter((c) => !c.meta.private), 0);
  ctx.body = { status: 'ok', service: 'media', version, categories: totals.categories, files: totals.files };
}

/** Quotas per IP a minute: MEDIA_RATE_LIMIT and MEDIA_FILE_RATE_LIMIT (api/media/config.ts gives their defaults). */
const MEDIA_GROUPS = {
  media: { name: 'media', limit: (config: Config) => config.media.rateLimit },
  file: { name: 'media-file', limit: (config: Config) => config.media.fileRateLimit },
};
const privateToo = requires('', ...MEDIA_PRIVATE);
const alias = 'scenery';

export const MEDIA_ROUTES: Route<MediaRouteDeps>[] = [
  {
    // A random pick is new on every request, and the landing page counts them.
    method: 'get', path: '/', limit: MEDIA_GROUPS.media, cacheControl: 'no-store', handle: randomOrLanding, doc: ROOT_DOC,
    params: [
      ...Object.entries(SELECTORS).map(([name, s]) => inQuery(name,
        `media: random ${s.private ? 'private ' : 'public '}${s.type} of the category with this alias, of several (a,b,c: each file equally likely) or of all${s.private ? ' (password needed)' : ''}`, text, name === 'img' ? { example: alias } : {})),
      ...PICK_PARAMS,
      flag('redirect', 0, 'media: 302 to the permanent address'),
      ...VARIANT_PARAMS,
    ],
  },
  {
    method: 'get', path: '/f/{file}', limit: MEDIA_GROUPS.file, handle: fileById,
    params: [inPath('file', '<id>.<ext> from a JSON answer or a redirect', { type: 'string', pattern: '^[0-9a-f]{24}\\.[a-z0-9]{2,5}$' }), ...VARIANT_PARAMS],
    doc: {
      summary: 'A file by its permanent address',
      description: 'Immutable while the file is unchanged; ETag, Last-Modified, single byte ranges (206, 416) and HEAD. Private files need credentials. '
        + '<id>.json answers what the random route\'s format=json says of the file (no-store). '
        + 'w, h, fit, fmt, q, blur, grayscale, upscale ask for a resized or converted variant of an image (its own ETag, as immutable; 400 on a video); '
        + 'an uncached one costs the client\'s MEDIA_VARIANT_BUDGET by its pixels: 429 past it.',
      ok: { ...octets('the file'), content: { 'application/json': { schema: ref('MediaItem') }, ...octets('the file').content } },
      more: {
        206: octets('the bytes of a single Range', { headers: headers('Content-Range') }),
        416: { description: 'a Range outside the file (no body)', headers: headers('Content-Range') },
      },
      conditional: true, head: true,
      errors: ['bad_request', 'route_not_found', 'password_required', 'wrong_password', 'overloaded', 'internal_error'],
      security: privateToo,
    },
  },
  {
    method: 'get', path: '/categories', limit: MEDIA_GROUPS.media, cacheControl: 'no-store', handle: categories,
    doc: { summary: 'Categories with their counts', description: 'Private categories too when credentials are sent.', ok: json('categories and totals', ref('MediaCategories')), errors: ['wrong_password'], security: privateToo },
  },
  {
    method: 'get', path: '/categories/{alias}/files', limit: MEDIA_GROUPS.media, cacheControl: 'no-store', handle: categoryFiles,
    params: [
      inPath('alias', 'the category', text, { example: alias }),
      inQuery('page', 'the page, from 1', between('integer', 1, MAX_PAGE, 1)),
      inQuery('limit', 'files per page', between('integer', 1, PAGE_LIMIT.max, PAGE_LIMIT.fallback)),
    ],
    doc: {
      summary: 'A category\'s files, a page at a time',
      description: 'Oldest in the index first: a file added while a client pages comes after every file listed before, so the pages hold each file once '
        + '(a file removed meanwhile moves the later ones one place forward). Link header (RFC 8288) with first, last, prev and next. '
        + 'A private category needs credentials; without them any category that is not public answers 401, so private ones are not told apart.',
      ok: { ...json('one page of files', ref('MediaFilePage')), headers: { Link: { description: 'first, last, prev and next pages (RFC 8288)', schema: { type: 'string' } } } },
      errors: ['bad_request', 'password_required', 'wrong_password', 'category_not_found', 'overloaded', 'internal_error'],
      security: privateToo,
    },
  },
  {
    method: 'get', path: '/login', limit: MEDIA_GROUPS.media, doc: { summary: 'Login form (HTML)', ok: html('the form') },
    handle: (ctx, { site }) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = loginPage(pageFrame(ctx, site, 'media'));
    },
  },
  {
    method: 'post', path: '/login', limit: MEDIA_GROUPS.media, cacheControl: 'no-store', handle: login,
    doc: {
      summary: 'Trade the password for a link token',
      description: 'A form post gets an HTML page with the token and links (or the form again with the reason, under the error status); JSON gets JSON. '
        + '10 password checks per IP per 10 minutes.',
      body: {
        required: true,
        content: { 'application/json': { schema: ref('MediaLogin'), example: { password: 'PASSWORD' } }, 'application/x-www-form-urlencoded': { schema: ref('MediaLogin') } },
      },
      ok: { description: 'the token (JSON), or a page with it (form post)', content: { 'application/json': { schema: ref('MediaToken') }, 'text/html': HTML } },
      errors: ['bad_request', 'wrong_password'], htmlErrors: true,
    },
  },
  { method: 'get', path: '/health', handle: health, doc: HEALTH_DOC },
];

export const MEDIA_TABLE: RouteTable = {
  service: 'media',
  description: 'A random image or video of a category by plain URL, orientation filter, private categories behind a password.',
  routes: MEDIA_ROUTES,
  schemas: MEDIA_SCHEMAS,
  securitySchemes: {
    mediaBasic: { type: 'http', scheme: 'basic', description: 'any user name, MEDIA_PASSWORD as password' },
    mediaPassword: { type: 'apiKey', in: 'header', name: 'X-Media-Password', description: 'MEDIA_PASSWORD' },
    mediaToken: { type: 'apiKey', in: 'query', name: 'token', description: 'signed expiring token from POST /login' },
  },
  errorBody: envelopeError,
};
