// The page a browser sees when the OAuth callback fails, in the reader's language. The
// explanation comes from the error code (the envelope's message and detail are Chinese).
import type { ApiError, ErrorCode } from '../../../shared/errors.ts';
import { html } from '../../http/html.ts';
import type { Lang } from '../../http/i18n.ts';
import { page, type ServiceLinks } from '../../http/page.ts';

const TEXT = {
  en: { title: 'Login failed', retry: 'Log in again', fallback: 'The login could not be completed.' },
  zh: { title: '登录失败', retry: '重新登录', fallback: '登录未能完成。' },
} satisfies Record<Lang, Record<string, string>>;

const REASONS: Partial<Record<ErrorCode, Record<Lang, string>>> = {
  oauth_state_mismatch: { en: 'The login request is invalid or has expired. Please log in again.', zh: '登录请求无效或已过期，请重新登录。' },
  oauth_denied: { en: 'The authorization was refused on the account site.', zh: '账号网站上拒绝了授权。' },
  oauth_failed: { en: 'The account site did not complete the login.', zh: '外部登录失败。' },
  missing_scope: { en: 'A permission the service needs was not granted.', zh: '授权时未授予所需的权限。' },
  missing_param: { en: 'The account site sent back an incomplete answer.', zh: '账号网站返回的信息不完整。' },
  rate_limited: { en: 'Too many attempts; please wait a moment and try again.', zh: '请求过于频繁，请稍后再试。' },
  upstream_error: { en: 'The account site answered with an error.', zh: '账号网站出错。' },
  upstream_timeout: { en: 'The account site did not answer in time.', zh: '账号网站响应超时。' },
  upstream_busy: { en: 'The account site is busy; please try again later.', zh: '账号网站繁忙，请稍后再试。' },
};

/** A message and a button to try again; the language switch leads to the home page. */
export function renderLoginFailed(lang: Lang, error: ApiError, links: ServiceLinks): string {
  const text = TEXT[lang];
  const reason = REASONS[error.code]?.[lang] ?? text.fallback;
  return page({ lang, links, service: 'skins' }, `${text.title} · Skinfarm`, html`<div class="card"><h1>${text.title}</h1><p>${reason} (${error.code})</p>
<p><a class="button" href="/oauth/external">${text.retry}</a></p></div>`, { switchTarget: '/' });
}
