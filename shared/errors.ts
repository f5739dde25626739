// One error type for every service: a stable code, its HTTP status and a public message in
// Chinese (the skins contract) and in English; each service sends one or both (api/http/envelope.ts).
// Anything that is not an ApiError is unexpected and becomes a plain 500 (details only in the log).

export const ERROR_CODES = {
  bad_request: { status: 400, message: '请求参数无效', en: 'Invalid request' },
  invalid_name: { status: 400, message: '玩家名格式无效', en: 'Invalid player name' },
  invalid_uuid: { status: 400, message: 'UUID 格式无效', en: 'Invalid UUID' },
  missing_param: { status: 400, message: '缺少必需的参数', en: 'A required parameter is missing' },
  too_many_names: { status: 400, message: '批量查询最多 100 个条目', en: 'A batch holds at most 100 entries' },
  bad_source: { status: 400, message: '不支持的数据源', en: 'Unsupported source' },
  invalid_skin: { status: 400, message: '上传的文件不是有效的皮肤 PNG', en: 'The uploaded file is not a valid skin PNG' },
  payload_too_large: { status: 413, message: '上传的文件过大', en: 'The request body is too large' },
  request_timeout: { status: 408, message: '请求未在规定时间内发送完毕', en: 'The request did not arrive in time' },
  unauthorized: { status: 401, message: '需要登录', en: 'Authentication required' },
  forbidden: { status: 403, message: '没有权限', en: 'Not allowed' },
  not_found: { status: 404, message: '玩家不存在', en: 'No such player' },
  no_texture: { status: 404, message: '该玩家没有此材质', en: 'This player has no such texture' },
  route_not_found: { status: 404, message: '接口不存在', en: 'No such endpoint' },
  method_not_allowed: { status: 405, message: '不支持的请求方法', en: 'Method not allowed' },
  rate_limited: { status: 429, message: '请求过于频繁，请稍后再试', en: 'Too many requests; try again later' },
  internal_error: { status: 500, message: '服务器内部错误', en: 'Internal error' },
  render_failed: { status: 500, message: '图像渲染失败', en: 'The image could not be rendered' },
  not_implemented: { status: 501, message: '该功能尚未实现', en: 'Not implemented' },
  upstream_error: { status: 502, message: '上游数据源出错', en: 'The upstream source failed' },
  overloaded: { status: 503, message: '服务繁忙，请稍后再试', en: 'The service is busy; try again later' },
  render_unavailable: { status: 503, message: '暂无可用的渲染节点，请稍后再试', en: 'No render node is available; try again shortly' },
  upstream_busy: { status: 503, message: '上游数据源暂时不可用（限流保护），请稍后再试', en: 'The upstream source is throttled to protect it; try again later' },
  oauth_not_configured: { status: 503, message: '未配置外部登录', en: 'External login is not configured' },
  upstream_timeout: { status: 504, message: '上游数据源超时', en: 'The upstream source timed out' },
  // accounts (OAuth login to the external service)
  not_logged_in: { status: 401, message: '未登录，请先通过 /oauth/external 登录', en: 'Not logged in; log in through /oauth/external first' },
  missing_scope: { status: 403, message: '授权时未授予所需的权限', en: 'The login did not grant the permission this needs' },
  oauth_state_mismatch: { status: 400, message: '登录请求无效或已过期，请重新登录', en: 'The login request is invalid or has expired; log in again' },
  oauth_denied: { status: 403, message: '用户拒绝了授权', en: 'The user denied the authorisation' },
  oauth_failed: { status: 502, message: '外部登录失败', en: 'The external login failed' },
  oauth_issuer_mismatch: { status: 400, message: '授权响应来自未知的签发方（iss 不符）', en: 'The authorization response names an unknown issuer (iss)' },
  cross_site_request: { status: 403, message: '拒绝来自其他站点的账户请求', en: 'Account requests from another site are refused' },
  unsupported_media_type: { status: 415, message: '请求体必须是 JSON（Content-Type: application/json）', en: 'The body must be JSON (Content-Type: application/json)' },
  // media service
  category_not_found: { status: 404, message: '未知的分类', en: 'Unknown category' },
  empty_category: { status: 404, message: '该分类中没有符合条件的媒体', en: 'No media in this category matches the filter' },
  password_required: { status: 401, message: '该分类需要密码', en: 'This category needs a password' },
  wrong_password: { status: 403, message: '密码错误', en: 'Wrong password' },
  // search service
  invalid_query: { status: 400, message: '查询为空或不能是所给的类型', en: 'The query is empty or cannot be of the given type' },
  invalid_type: { status: 400, message: '未知的查询类型', en: 'Unknown query type' },
  missing_key: { status: 401, message: '需要 API 密钥（X-API-Key）', en: 'An API key is required (X-API-Key)' },
  invalid_key: { status: 401, message: '未知的 API 密钥', en: 'Unknown API key' },
  key_disabled: { status: 403, message: '该 API 密钥已停用', en: 'This API key is disabled' },
  key_expired: { status: 403, message: '该 API 密钥已过期', en: 'This API key has expired' },
  key_exhausted: { status: 403, message: '该 API 密钥的请求次数已用完', en: 'This API key has used up its request limit' },
  admin_disabled: { status: 404, message: '管理 API 未开启（未设置 SEARCH_ADMIN_TOKEN）', en: 'The admin API is off (SEARCH_ADMIN_TOKEN is not set)' },
  search_failed: { status: 500, message: '搜索未能完成', en: 'The search could not be completed' },
} as const satisfies Record<string, { status: number; message: string; en: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Words in both languages: a detail, or a message of one service's own. */
export interface Localized { zh: string; en: string }

/** The languages every public message is written in. */
export type Language = keyof Localized;

/** A message followed by its detail, as every message with a detail reads. */
export function withDetail(message: string, detail: string | undefined): string {
  return detail ? `${message}: ${detail}` : message;
}

export interface ApiErrorOptions {
  /** Extra detail appended to the public message (must not leak internals): a value, or words in both languages. */
  detail?: string | Localized;
  /** Seconds the client should wait (sent as Retry-After). */
  retryAfter?: number;
  /** Extra headers for the error response. */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** The detail in English (what the logs show). */
  readonly detail: string | undefined;
  /** The public message in English (`message` is the Chinese one). */
  readonly messageEn: string;
  readonly retryAfter: number | undefined;
  readonly headers: Record<string, string>;
  /** The detail in each language; a value reads the same in both. */
  private readonly details: Localized | undefined;

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    const entry = ERROR_CODES[code];
    const { detail } = options;
    const details = typeof detail === 'string' ? { zh: detail, en: detail } : detail;
    super(withDetail(entry.message, details?.zh), { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = entry.status;
    this.details = details;
    this.detail = details?.en;
    this.messageEn = withDetail(entry.en, details?.en);
    this.retryAfter = options.retryAfter;
    this.headers = options.headers ?? {};
  }

  /** The detail in one language. */
  detailIn(lang: Language): string | undefined {
    return this.details?.[lang];
  }

  /** The public message in one language. */
  messageIn(lang: Language): string {
    return lang === 'zh' ? this.message : this.messageEn;
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}
