// GET /: what the service is, a live example, and the login state.
import { html, scriptValue } from '../../http/html.ts';
import type { Lang } from '../../http/i18n.ts';
import { page, type PageFrame } from '../../http/page.ts';

export interface LandingData { demoPlayer: string; user: { name: string } | null; oauthConfigured: boolean }

const TEXT = {
  en: {
    title: 'Home',
    heading: 'Player skin images',
    intro: 'Looks up players by name or UUID among official (Mojang) accounts, an external (Yggdrasil) site and Bedrock players (GeyserMC), answers every texture detail, and draws images on the server: avatars, heads, full bodies, 3D renders at any angle and in poses, busts, cube heads, raw skins and capes as PNG, WebP or AVIF (format= or an extension: /256.webp), and turntables, the 3D render turning a full turn as animated WebP, APNG or GIF.',
    example: 'Example',
    record: '(the player\'s record as JSON)',
    avatar: 'Avatar: the face with its hat layer',
    render: '3D render, turned 30° and seen from 10° above',
    account: 'Account',
    loggedIn: 'Logged in as',
    logout: 'Log out',
    profiles: 'My players',
    loading: 'Loading…',
    noProfiles: 'No players',
    profilesFailed: 'Your players could not be loaded.',
    login: 'Log in with your external account',
    notConfigured: 'External login is not set up (OAUTH_CLIENT_ID and the rest).',
  },
  zh: {
    title: '首页',
    heading: '玩家皮肤图像服务',
    intro: '按玩家名或 UUID 查询官方（Mojang）账号、外部（Yggdrasil）站点与基岩版玩家（GeyserMC），返回完整的材质信息，并在服务器端绘制图像：头像、头部、全身、任意角度与姿势的 3D 渲染、半身像、立方体头像、原始皮肤与披风（PNG、WebP 或 AVIF：format= 或扩展名，如 /256.webp），以及转盘动画：3D 渲染旋转一整圈，动态 WebP、APNG 或 GIF。',
    example: '示例',
    record: '（玩家信息，JSON）',
    avatar: '头像：正脸与帽子层',
    render: '3D 渲染：转 30°，自上方 10° 俯视',
    account: '账号',
    loggedIn: '已登录：',
    logout: '退出',
    profiles: '我的角色',
    loading: '加载中…',
    noProfiles: '没有角色',
    profilesFailed: '无法加载角色。',
    login: '使用外部账号登录',
    notConfigured: '外部登录未配置（OAUTH_CLIENT_ID 等）。',
  },
} satisfies Record<Lang, Record<string, string>>;

/** An example image captioned with what it shows and the address that drew it (a link to it alone). */
const figure = (id: string, src: string, size: number, caption: string) =>
  html`<figure><img id="${id}" src="${src}" alt="${caption}" width="${size}" height="${size}">
<figcaption>${caption}: <a href="${src}"><code>${decodeURIComponent(src)}</code></a></figcaption></figure>`;

export function renderLanding(frame: PageFrame, data: LandingData): string {
  const text = TEXT[frame.lang];
  const player = encodeURIComponent(data.demoPlayer);
  const login = data.user
    ? html`<p>${text.loggedIn} <strong id="user-name">${data.user.name}</strong> · <a href="/oauth/logout">${text.logout}</a></p>
<h3>${text.profiles}</h3><ul id="profiles"><li>${text.loading}</li></ul>
<script>
fetch('/v1/me/profiles?pretty=0').then((r) => r.json()).then((body) => {
  const list = document.getElementById('profiles');
  list.textContent = '';
  const profiles = body.success ? body.data.profiles : [];
  if (!profiles.length) list.textContent = body.success ? ${scriptValue(text.noProfiles)} : ${scriptValue(text.profilesFailed)};
  for (const p of profiles) {
    const li = document.createElement('li');
    const img = document.createElement('img');
    img.src = '/v1/avatar/' + p.id + '/32?source=external';
    img.alt = '';
    img.width = 32;
    li.append(img, ' ' + p.name + ' (' + p.id + ')');
    list.append(li);
  }
});
</script>`
    : data.oauthConfigured
      ? html`<p><a class="button" id="login" href="/oauth/external">${text.login}</a></p>`
      : html`<p>${text.notConfigured}</p>`;
  return page(frame, `${text.title} · Skinfarm`, html`
<div class="card"><h1 id="heading">${text.heading}</h1>
<p>${text.intro}</p>
<p>${text.example}: <a id="example-record" href="/v1/player/${player}"><code>/v1/player/${data.demoPlayer}</code></a> ${text.record}</p>
<div class="example">${figure('example-avatar', `/v1/avatar/${player}/64`, 64, text.avatar)}
${figure('example-render', `/v1/render/${player}/160?yaw=30&pitch=10`, 160, text.render)}</div></div>
<div class="card"><h2>${text.account}</h2>${login}</div>`);
}
