// The search API's error body, {status: "error", error: {code, message}}, in the reader's
// language (api/http/i18n.ts; every code has both messages in shared/errors.ts). One shared code
// means something narrower here.
import type { Context } from 'koa';
import { withDetail, type ApiError, type ErrorCode, type Localized } from '../../shared/errors.ts';
import { requestLanguage } from '../http/i18n.ts';

const IN_THIS_API: Partial<Record<ErrorCode, Localized>> = {
  unauthorized: {
    en: 'Admin token required (Authorization: Bearer <SEARCH_ADMIN_TOKEN>)',
    zh: '需要管理令牌（Authorization: Bearer <SEARCH_ADMIN_TOKEN>）',
  },
};

/** `ctx` is absent for a request Node refused before Koa (then English). */
export function formatSearchError(error: ApiError, ctx?: Context) {
  const lang = requestLanguage(ctx);
  const base = IN_THIS_API[error.code]?.[lang];
  const message = base ? withDetail(base, error.detailIn(lang)) : error.messageIn(lang);
  return { status: 'error', error: { code: error.code, message } };
}
