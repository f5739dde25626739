// GeyserMC's Global API (bedrock source), under /bedrock: gamertag -> XUID, XUID -> gamertag and
// XUID -> the skin Floodgate converted, as a texture id on the fake's Mojang texture host
// (/official/textures/texture/{id}). Shapes as GeyserMC documents them (docs/skins.md).
import { sendJson } from './http.ts';
import type { SkinArt } from './players.ts';
import type { FakeContext, FakeRoute } from './state.ts';
import { drawTexture, textureBase } from './textures.ts';

export interface BedrockPlayer {
  gamertag: string;
  xuid: number;
  /** The converted skin, or null for a player Xbox Live knows who never joined a Geyser server. */
  skin: SkinArt | null;
  slim: boolean;
}

export const BEDROCK_PLAYERS: readonly BedrockPlayer[] = [
  // The demo: a gamertag with a space (Floodgate names it `.Pocket_Ranger`).
  { gamertag: 'Pocket Ranger', xuid: 2535432196048835, slim: true, skin: { seed: 31, slim: true, look: 'ranger' } },
  // The test pattern, so a test can read faces pixel by pixel.
  { gamertag: 'BedrockSteve', xuid: 2535400000000001, slim: false, skin: { seed: 32 } },
  { gamertag: 'NeverJoined', xuid: 2535400000000002, slim: false, skin: null },
];

const byGamertag = (gamertag: string) => BEDROCK_PLAYERS.find((p) => p.gamertag.toLowerCase() === gamertag.toLowerCase());
const byXuid = (xuid: string) => BEDROCK_PLAYERS.find((p) => String(p.xuid) === xuid);

/** The Global API's 400: `{message}`; true when the XUID is not an integer. */
function badXuid(ctx: FakeContext, xuid: string): boolean {
  if (/^\d{1,19}$/.test(xuid)) return false;
  sendJson(ctx.res, 400, { message: 'xuid should be an int' });
  return true;
}

function xuidOf(ctx: FakeContext): void {
  const [gamertag] = ctx.params;
  if (gamertag.length === 0 || gamertag.length > 16) return sendJson(ctx.res, 400, { message: 'invalid gamertag' });
  const player = byGamertag(gamertag);
  // An unknown gamertag is `{}`, not 404.
  sendJson(ctx.res, 200, player ? { xuid: player.xuid } : {});
}

function gamertagOf(ctx: FakeContext): void {
  const [xuid] = ctx.params;
  if (badXuid(ctx, xuid)) return;
  const player = byXuid(xuid);
  sendJson(ctx.res, 200, player ? { gamertag: ctx.state.answers.bedrockGamertag ?? player.gamertag } : {});
}

async function skinOf(ctx: FakeContext): Promise<void> {
  const [xuid] = ctx.params;
  if (badXuid(ctx, xuid)) return;
  const player = byXuid(xuid);
  if (!player?.skin) return sendJson(ctx.res, 200, {});
  const { hash } = await drawTexture({ kind: 'skin', spec: player.skin });
  const url = `${textureBase(ctx.state.baseUrl, 'official')}/${hash}`;
  // What Floodgate's upload leaves: the textures property of the account that converted it.
  const value = Buffer.from(JSON.stringify({ textures: { SKIN: { url, ...(player.slim ? { metadata: { model: 'slim' } } : {}) } } })).toString('base64');
  sendJson(ctx.res, 200, { hash, is_steve: !player.slim, signature: 'fake', texture_id: hash, value });
}

export const bedrockRoutes: FakeRoute[] = [
  { method: 'GET', pattern: /^\/bedrock\/v2\/xbox\/xuid\/([^/]*)$/, key: 'bedrock.xuid', handler: xuidOf },
  { method: 'GET', pattern: /^\/bedrock\/v2\/xbox\/gamertag\/([^/]*)$/, key: 'bedrock.gamertag', handler: gamertagOf },
  { method: 'GET', pattern: /^\/bedrock\/v2\/skin\/([^/]*)$/, key: 'bedrock.skin', handler: skinOf },
];
