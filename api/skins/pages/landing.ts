// GET /: what the service is, a live example, and the login state.
import { escapeHtml, layout } from './layout.ts';

export interface LandingData { demoPlayer: string; user: { name: string } | null; oauthConfigured: boolean }

export function renderLanding(data: LandingData): string {
  const player = encodeURIComponent(data.demoPlayer);
  const login = data.user
    ? `<p>已登录：<strong id="user-name">${escapeHtml(data.user.name)}</strong> · <a href="/oauth/logout">退出</a></p>
<h3>我的角色</h3><ul id="profiles"><li>加载中…</li></ul>
<script>
fetch('/v1/me/profiles?pretty=0').then((r) => r.json()).then((body) => {
  const list = document.getElementById('profiles');
  list.textContent = '';
  const profiles = body.success ? body.data.profiles : [];
  if (!profiles.length) list.textContent = body.success ? '没有角色' : body.message;
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
      ? '<p><a class="button" id="login" href="/oauth/external">使用外部账号登录</a></p>'
      : '<p>外部登录未配置（OAUTH_CLIENT_ID 等）。</p>';
  const body = `
<div class="card"><h2>玩家皮肤图像服务</h2>
<p>按玩家名或 UUID 查询官方与外部（Yggdrasil）账号，返回完整的材质信息，并在服务器端生成 PNG：头像、头部、全身、任意角度的 3D 渲染、立方体头像、原始皮肤与披风。</p>
<p>示例：<code>/v1/player/${escapeHtml(data.demoPlayer)}</code></p>
<p class="example"><img id="example-avatar" src="/v1/avatar/${player}/64" alt="avatar" width="64" height="64">
<img id="example-render" src="/v1/render/${player}/160?yaw=30&amp;pitch=10" alt="3D render" width="160" height="160"></p></div>
<div class="card"><h2>账号</h2>${login}</div>`;
  return layout('首页', body);
}
