// GeyserMC's Global API (bedrock source): gamertag to XUID, and XUID to the skin Floodgate
// converted when the player last joined a Geyser server, as a texture id on Mojang's texture
// host. Shapes in docs/skins.md ("Bedrock players").
import { floodgateName, floodgateUuid, gamertagOf, xuidOf } from './floodgate.ts';
import type { NameHit, RawProfile } from '../types.ts';
import { GAMERTAG } from '../validate.ts';
import type { UpstreamClient } from './client.ts';

export interface BedrockConfig { apiUrl: string; textureUrl: string; namePrefix: string }

/** A texture id is a hash: hex only, so nothing the upstream says can steer the texture address. */
const TEXTURE_ID = /^[0-9a-f]{8,128}$/i;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{}` is the Global API's "no such player"; anything else must have the fields asked for. */
const isEmpty = (value: unknown) => isObject(value) && Object.keys(value).length === 0;

export class BedrockSource {
  readonly id = 'bedrock' as const;
  readonly label = 'Bedrock players (GeyserMC Global API)';
  readonly client: UpstreamClient;
  readonly prefix: string;
  private readonly config: BedrockConfig;

  constructor(config: BedrockConfig, client: UpstreamClient) {
    this.config = config;
    this.client = client;
    this.prefix = config.namePrefix;
  }

  /** A name this source can look up: a gamertag, with or without the prefix. */
  acceptsName(name: string): boolean {
    return gamertagOf(name, this.prefix) !== null;
  }

  /** Under `source=auto`, the names and UUIDs that are Bedrock players' and no one else's. */
  claimsName(name: string): boolean {
    return name.startsWith(this.prefix) && this.acceptsName(name);
  }

  claimsUuid(uuid: string): boolean {
    return xuidOf(uuid) !== null;
  }

  /** Gamertag to its Floodgate UUID; null when no Geyser server has seen it. */
  async nameToId(name: string): Promise<NameHit | null> {
    const gamertag = gamertagOf(name, this.prefix);
    if (gamertag === null) return null;
    const body = await this.get(`/v2/xbox/xuid/${encodeURIComponent(gamertag)}`, 'bedrock.names');
    if (isEmpty(body)) return null;
    const xuid = isObject(body) ? body.xuid : undefined;
    if (typeof xuid !== 'number' || !Number.isSafeInteger(xuid) || xuid <= 0) throw this.client.malformed('xuid lookup');
    return { id: floodgateUuid(xuid), name: floodgateName(gamertag, this.prefix), source: 'bedrock' };
  }

  /**
   * The converted skin of a Floodgate UUID as a profile with a textures property; null when the
   * UUID is no Floodgate UUID or the player has no skin there (never joined a Geyser server).
   */
  async profile(uuid: string): Promise<RawProfile | null> {
    const xuid = xuidOf(uuid);
    if (xuid === null) return null;
    const skin = await this.get(`/v2/skin/${xuid}`, 'bedrock.profiles');
    if (isEmpty(skin)) return null;
    if (!isObject(skin) || typeof skin.texture_id !== 'string' || !TEXTURE_ID.test(skin.texture_id) || typeof skin.is_steve !== 'boolean') {
      throw this.client.malformed('skin');
    }
    const tag = await this.get(`/v2/xbox/gamertag/${xuid}`, 'bedrock.profiles');
    // The skin is there but Xbox Live no longer names the account (`{}`): the XUID stands in.
    // A gamertag that breaks the gamertag rule is a wrong answer: it never becomes a name.
    const named = isObject(tag) && tag.gamertag !== undefined && tag.gamertag !== '';
    if (named && (typeof tag.gamertag !== 'string' || !GAMERTAG.test(tag.gamertag))) throw this.client.malformed('gamertag');
    const gamertag = named ? tag.gamertag as string : xuid;
    const name = floodgateName(gamertag, this.prefix);
    const SKIN = { url: `${this.config.textureUrl}/${skin.texture_id.toLowerCase()}`, ...(skin.is_steve ? {} : { metadata: { model: 'slim' } }) };
    // Our own (unsigned) property: the upstream's signed value names the account that converted the skin, not the player.
    const value = Buffer.from(JSON.stringify({ profileId: uuid, profileName: name, textures: { SKIN } })).toString('base64');
    return { id: uuid, name, properties: [{ name: 'textures', value }], source: 'bedrock' };
  }

  private async get(path: string, family: string): Promise<unknown> {
    return (await this.client.json<unknown>(`${this.config.apiUrl}${path}`, { family })).body;
  }
}
