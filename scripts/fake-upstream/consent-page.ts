// The HTML consent page of the fake OAuth provider. Everything from the query is escaped.
import { escapeHtml } from './http.ts';
import type { FakeUser } from './players.ts';

const SCOPE_TEXT: Record<string, string> = {
  'openid': 'Sign you in with your identity',
  'offline_access': 'Stay signed in',
  'User.Read': 'Read your profile (nickname, email, score)',
  'Player.Read': 'Read your players',
  'Player.ReadWrite': 'Read and change your players',
  'Closet.Read': 'Read your closet',
  'Closet.ReadWrite': 'Read and change your closet',
  'Notification.Read': 'Read your notifications',
  'PremiumVerification.Read': 'Read whether you own an official account',
  'Yggdrasil.PlayerProfiles.Read': 'Read your game profiles',
  'Yggdrasil.PlayerProfiles.Select': 'Choose a game profile',
  'Yggdrasil.Server.Join': 'Join game servers as you',
  'Yggdrasil.MinecraftToken.Create': 'Create game tokens for your players',
};

export function consentPage(o: { requestId: string; clientId: string; redirectUri: string; scopes: string[]; users: readonly FakeUser[] }): string {
  const users = o.users.map((u) => `<option value="${u.uid}">${escapeHtml(`${u.nickname} <${u.email}>`)}</option>`).join('');
  const scopes = o.scopes.map((s) => `<li><code>${escapeHtml(s)}</code> ${escapeHtml(SCOPE_TEXT[s] ?? '')}</li>`).join('');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Authorize ${escapeHtml(o.clientId)} - Fake LittleSkin</title></head>
<body>
<h1>Fake LittleSkin</h1>
<form method="post" action="/external/oauth/authorize">
<input type="hidden" name="request" value="${escapeHtml(o.requestId)}">
<p><label>Signed in as <select name="user">${users}</select></label></p>
<p>The application <strong>${escapeHtml(o.clientId)}</strong> (returning to <code>${escapeHtml(o.redirectUri)}</code>) asks to:</p>
<ul>${scopes}</ul>
<button type="submit" id="approve" name="decision" value="approve">Authorize</button>
<button type="submit" id="deny" name="decision" value="deny">Deny</button>
</form>
</body>
</html>
`;
}
