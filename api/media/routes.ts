// The media service's routes: thin handlers over the selector, library, access and file modules.
import type { Context } from 'koa';
import { ApiError, isApiError, type Localized } from '../../shared/errors.ts';
import { readBody } from '../http/body.ts';
import { requestOrigin } from '../http/client-address.ts';
import { pageFrame, type SiteAddresses } from '../http/page.ts';
import { choice, flag, inPath, inQuery, text, type Params } from '../http/params.ts';
import type { Route, RouteTable } from '../http/route-table.ts';
import { headers, HTML, html, json, octets, requires } from '../docs/fragments.ts';
import { envelopeError, ref } from '../docs/schemas.ts';
import { MEDIA_PRIVATE, HEALTH_DOC, ROOT_DOC } from '../docs/shared-routes.ts';
import type { Config } from '../config.ts';
import type { Grant, PrivateAccess } from './access.ts';
import type { MediaSettings } from './config.ts';
import type { CallCounter } from './counter.ts';
import { sendMediaFile, type SendResult } from './file-response.ts';
import { isTransient } from './fs-errors.ts';
import { landingPage, summarize, summarizeCategory } from './landing.ts';
import type { Category, Library } from './library.ts';
import { loginPage, tokenPage } from './login-page.ts';
import type { LibraryScanner } from './scanner.ts';
import { parseSelection, SELECTORS, type Selection } from './selector.ts';
import { ORIENTATION_FILTERS, type OrientationFilter } from './orientation.ts';
import { MEDIA_SCHEMAS } from './schemas.ts';
import type { StickyPicks } from './sticky.ts';
import type { MediaFile, MediaType } from './types.ts';

export interface MediaRouteDeps {
  library: Library;
  scanner: LibraryScanner;
  access: PrivateAccess;
  counter: CallCounter;
  settings: MediaSettings;
  sticky: StickyPicks;
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

/** The category a selection may reach: private selectors see private categories only, and the reverse. */
function selectedCategory(library: Library, selection: Selection): Category {
  const category = library.category(selection.alias);
  const visible = category?.indexed === true && category.meta.private === selection.private;
  // A category never read whole has no known privacy either: any selector hears the same failure.
  if (library.fault(selection.alias) && (visible || !category?.indexed)) throw unreadable({ zh: '该分类', en: 'this category' });
  if (visible) return category!;
  // Any other category answers the same while indexing, so the 503 does not tell private ones apart.
  if (library.indexing) throw stillIndexing();
  const name = JSON.stringify(selection.alias.slice(0, 80));
  throw new ApiError('category_not_found', {
    detail: selection.private
      ? { zh: `没有名为 ${name} 的私有分类`, en: `no private category ${name}` }
      : { zh: `没有名为 ${name} 的公开分类`, en: `no public category ${name}` },
  });
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
  if (kept?.unreadable) kept = undefined;
  let lastUnreadable = false;
  for (let attempt = 0; attempt < PICK_ATTEMPTS; attempt++) {
    const file = kept ?? category.pick(selection.type, selection.orientation);
    kept = undefined;
    if (!file) {
      // Files are there but none can be read: the server's failure, not an empty category.
      const typeZh = TYPE_ZH[selection.type];
      if (category.unreadable(selection.type) > 0) throw unreadable({ zh: `该分类的${typeZh}`, en: `the ${selection.type}s of this category` });
      const { orientation } = selection;
      throw new ApiError('empty_category', {
        detail: { zh: `${selection.alias} 中没有${orientation ? ORIENTATION_ZH[orientation] : ''}${typeZh}`, en: `${selection.alias} has no ${orientation ? `${orientation} ` : ''}${selection.type}s` },
      });
    }
    if (key) sticky.remember(key, file.id);
    const url = permanentUrl(base, file, grant);
    if (selection.answer === 'json') {
      ctx.body = describe(file, category, url);
      return;
    }
    if (selection.answer === 'redirect') {
      ctx.redirect(url);
      return;
    }
    ctx.set('Content-Location', url);
    const sent = await sendMediaFile(ctx, file, deps.library.pathOf(file), { cache: 'no-store', ranges: sticky.enabled });
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
    await answerSelection(ctx, deps, selection);
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
  if (!file || !category || file.ext !== ext) {
    if (id && library.indexing) throw stillIndexing();
    throw new ApiError('route_not_found', { detail: { zh: '此地址没有媒体文件', en: 'no media file at this address' } });
  }
  if (category.meta.private) await access.require(ctx);
  if (file.unreadable || library.fault(file.alias)) throw unreadable(THIS_FILE);
  const sent = await sendMediaFile(ctx, file, library.pathOf(file), { cache: category.meta.private ? 'private' : 'public', ranges: true });
  if (sent === 'sent') return;
  if (await settleUnsent(deps, file, sent)) throw unreadable(THIS_FILE);
  throw new ApiError('route_not_found', { detail: { zh: '该文件已更改或被删除，请重新随机获取一个文件', en: 'this file changed or was removed; ask for a new random file' } });
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
        `media: random ${s.private ? 'private ' : 'public '}${s.type} of the category with this alias${s.private ? ' (password needed)' : ''}`, text, name === 'img' ? { example: alias } : {})),
      inQuery('orientation', 'media: only files of this orientation (square files match neither)', choice(ORIENTATION_FILTERS)),
      inQuery('format', 'media: a JSON description instead of the file', choice(['json']), { example: 'json' }),
      flag('redirect', 0, 'media: 302 to the permanent address'),
    ],
  },
  {
    method: 'get', path: '/f/{file}', limit: MEDIA_GROUPS.file, handle: fileById,
    params: [inPath('file', '<id>.<ext> from a JSON answer or a redirect', { type: 'string', pattern: '^[0-9a-f]{24}\\.[a-z0-9]{2,5}$' })],
    doc: {
      summary: 'A file by its permanent address',
      description: 'Immutable while the file is unchanged; ETag, Last-Modified, single byte ranges (206, 416) and HEAD. Private files need credentials.',
      ok: octets('the file'),
      more: {
        206: octets('the bytes of a single Range', { headers: headers('Content-Range') }),
        416: { description: 'a Range outside the file (no body)', headers: headers('Content-Range') },
      },
      conditional: true, head: true,
      errors: ['route_not_found', 'password_required', 'wrong_password', 'overloaded', 'internal_error'],
      security: privateToo,
    },
  },
  {
    method: 'get', path: '/categories', limit: MEDIA_GROUPS.media, cacheControl: 'no-store', handle: categories,
    doc: { summary: 'Categories with their counts', description: 'Private categories too when credentials are sent.', ok: json('categories and totals', ref('MediaCategories')), errors: ['wrong_password'], security: privateToo },
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
