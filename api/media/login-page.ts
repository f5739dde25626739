// The login form (password in a POST body, never in a URL) and the page showing the token, in
// the reader's language. A failed login is explained in that language: in the form's own words
// where they say it better, else by the error's message.
import type { ApiError, ErrorCode } from '../../shared/errors.ts';
import { html } from '../http/html.ts';
import type { Lang } from '../http/i18n.ts';
import { page, type PageFrame } from '../http/page.ts';
import { exampleUrl, type CategorySummary } from './landing.ts';
import type { Grant } from './access.ts';

const TEXT = {
  en: {
    title: 'Private media login', heading: 'Private media', password: 'Password', submit: 'Get token',
    intro: 'The password gives a signed link token; add', introRest: 'to private media URLs to embed them.',
    tokenTitle: 'Private media token', tokenHeading: 'Your token', validUntil: 'Valid until', noPrivate: 'There are no private categories.',
  },
  zh: {
    title: '私有媒体登录', heading: '私有媒体', password: '密码', submit: '获取令牌',
    intro: '输入密码可获得签名的链接令牌；在私有媒体网址后加上', introRest: '即可嵌入使用。',
    tokenTitle: '私有媒体令牌', tokenHeading: '你的令牌', validUntil: '有效期至', noPrivate: '没有私有分类。',
  },
} satisfies Record<Lang, Record<string, string>>;

const REASONS: Partial<Record<ErrorCode, Record<Lang, string>>> = {
  rate_limited: { en: 'Too many attempts from this address; try again later.', zh: '此地址尝试次数过多，请稍后再试。' },
  bad_request: { en: 'Enter the password.', zh: '请输入密码。' },
  payload_too_large: { en: 'The form is too large.', zh: '表单过大。' },
};

export function loginPage(frame: PageFrame, error?: ApiError): string {
  const text = TEXT[frame.lang];
  const reason = error && (REASONS[error.code]?.[frame.lang] ?? error.messageIn(frame.lang));
  return page(frame, `${text.title} · Skinfarm`, html`<div class="card"><h1>${text.heading}</h1>
<p>${text.intro} <code>&amp;token=…</code> ${text.introRest}</p>
${reason && html`<p class="error" role="alert">${reason}</p>`}
<form method="post" action="/login">
<label>${text.password} <input type="password" name="password" autocomplete="current-password" required autofocus></label>
<button type="submit">${text.submit}</button>
</form></div>`);
}

export function tokenPage(frame: PageFrame, grant: Grant, privateCategories: CategorySummary[], baseUrl: string): string {
  const text = TEXT[frame.lang];
  const expires = new Date(grant.expiresAt * 1000).toISOString();
  const links = privateCategories.map((c) => {
    const url = `${exampleUrl(baseUrl, c)}&token=${encodeURIComponent(grant.token)}`;
    return html`<li>${c.name}: <a href="${url}">${url}</a></li>`;
  });
  return page(frame, `${text.tokenTitle} · Skinfarm`, html`<div class="card"><h1>${text.tokenHeading}</h1>
<p><code id="token">${grant.token}</code></p>
<p>${text.validUntil} <time datetime="${expires}">${expires}</time>.</p>
${links.length ? html`<ul>${links}</ul>` : html`<p>${text.noPrivate}</p>`}</div>`);
}
