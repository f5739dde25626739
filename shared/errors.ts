// One error type for every service: a stable code, its HTTP status and a public message.
// Anything that is not an ApiError is unexpected and becomes a plain 500 (details only in the log).

export const ERROR_CODES = {
  bad_request: { status: 400, message: '请求参数无效' },
  invalid_name: { status: 400, message: '玩家名格式无效' },
  invalid_uuid: { status: 400, message: 'UUID 格式无效' },
  missing_param: { status: 400, message: '缺少必需的参数' },
  too_many_names: { status: 400, message: '批量查询最多 100 个条目' },
  bad_source: { status: 400, message: '不支持的数据源' },
  invalid_skin: { status: 400, message: '上传的文件不是有效的皮肤 PNG' },
  payload_too_large: { status: 413, message: '上传的文件过大' },
  unauthorized: { status: 401, message: '需要登录' },
  forbidden: { status: 403, message: '没有权限' },
  not_found: { status: 404, message: '玩家不存在' },
  no_texture: { status: 404, message: '该玩家没有此材质' },
  route_not_found: { status: 404, message: '接口不存在' },
  method_not_allowed: { status: 405, message: '不支持的请求方法' },
  rate_limited: { status: 429, message: '请求过于频繁，请稍后再试' },
  internal_error: { status: 500, message: '服务器内部错误' },
  render_failed: { status: 500, message: '图像渲染失败' },
  not_implemented: { status: 501, message: '该功能尚未实现' },
  upstream_error: { status: 502, message: '上游数据源出错' },
  overloaded: { status: 503, message: '服务繁忙，请稍后再试' },
  upstream_busy: { status: 503, message: '上游数据源暂时不可用（限流保护），请稍后再试' },
  oauth_not_configured: { status: 503, message: '未配置外部登录' },
  upstream_timeout: { status: 504, message: '上游数据源超时' },
  // accounts (OAuth login to the external service)
  not_logged_in: { status: 401, message: '未登录，请先通过 /oauth/external 登录' },
  missing_scope: { status: 403, message: '授权时未授予所需的权限' },
  oauth_state_mismatch: { status: 400, message: '登录请求无效或已过期，请重新登录' },
  oauth_denied: { status: 403, message: '用户拒绝了授权' },
  oauth_failed: { status: 502, message: '外部登录失败' },
  oauth_issuer_mismatch: { status: 400, message: '授权响应来自未知的签发方（iss 不符）' },
  cross_site_request: { status: 403, message: '拒绝来自其他站点的账户请求' },
  unsupported_media_type: { status: 415, message: '请求体必须是 JSON（Content-Type: application/json）' },
  // media service
  category_not_found: { status: 404, message: 'Unknown category' },
  empty_category: { status: 404, message: 'No media in this category matches the filter' },
  password_required: { status: 401, message: 'This category needs a password' },
  wrong_password: { status: 403, message: 'Wrong password' },
  // search service
  invalid_query: { status: 400, message: 'The query is empty or cannot be of the given type' },
  invalid_type: { status: 400, message: 'Unknown query type' },
  missing_key: { status: 401, message: 'An API key is required (X-API-Key)' },
  invalid_key: { status: 401, message: 'Unknown API key' },
  key_disabled: { status: 403, message: 'This API key is disabled' },
  key_expired: { status: 403, message: 'This API key has expired' },
  key_exhausted: { status: 403, message: 'This API key has used up its request limit' },
  admin_disabled: { status: 404, message: 'The admin API is off (SEARCH_ADMIN_TOKEN is not set)' },
  search_failed: { status: 500, message: 'The search could not be completed' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ApiErrorOptions {
  /** Extra detail appended to the public message (must not leak internals). */
  detail?: string;
  /** Seconds the client should wait (sent as Retry-After). */
  retryAfter?: number;
  /** Extra headers for the error response. */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string | undefined;
  readonly retryAfter: number | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    const entry = ERROR_CODES[code];
    super(options.detail ? `${entry.message}: ${options.detail}` : entry.message, { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = entry.status;
    this.detail = options.detail;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers ?? {};
  }
}

export function apiError(code: ErrorCode, detail?: string, options: Omit<ApiErrorOptions, 'detail'> = {}): ApiError {
  return new ApiError(code, { ...options, detail });
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}
