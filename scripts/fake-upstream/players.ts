// The fake's players and account users. Everything is derived from names, so every run (and every
// test) sees the same UUIDs and the same pictures.
import { createHash } from 'node:crypto';
import { LruMap } from '../../shared/lru-map.ts';
import { normalizeUuid } from '../../shared/uuid.ts';
import type { CapeLook, SkinLook } from './skin-looks.ts';

export type Source = 'official' | 'external';

/**
 * A drawn texture: the test pattern (its shade by seed), or a real-looking demo `look`. A
 * generated player's `number` is written into its pixels (skin-art.ts), so each one is distinct.
 */
export interface SkinArt { seed: number; number?: number; slim?: boolean; legacy?: boolean; scale?: number; look?: SkinLook }
export interface CapeArt { seed: number; number?: number; legacy?: boolean; look?: CapeLook }
/** SKIN urls that lead somewhere a careful client must refuse (see textures.ts). */
export type SkinTrap = 'evil' | 'redirect' | 'notPng' | 'huge';

export interface FakePlayer {
  name: string;
  uuid: string;
  source: Source;
  /** The model written into the textures property. */
  slim: boolean;
  skin: SkinArt | SkinTrap | null;
  cape: CapeArt | null;
  /** Official requests naming this player hang until close, or answer 500. */
  behaviour?: 'hang' | 'fail';
  generated: boolean;
}

export interface FakeUser {
  uid: number;
  nickname: string;
  email: string;
  /** Official UUID of a verified premium account, or null. */
  premiumUuid: string | null;
  /** External players, with their Blessing Skin player ids. */
  players: Array<{ pid: number; player: FakePlayer }>;
}

function md5(text: string): Buffer {
  return createHash('md5').update(text, 'utf8').digest();
}

/** Official UUIDs: md5 of the name with the version and variant bits of a random (v4) UUID. */
export function officialUuid(name: string): string {
  const bytes = md5(name);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  return bytes.toString('hex');
}

/** Offline-mode UUID, as Java's UUID.nameUUIDFromBytes("OfflinePlayer:" + name) (v3). */
export function offlineUuid(name: string): string {
  const bytes = md5(`OfflinePlayer:${name}`);
  bytes[6] = (bytes[6] & 0x0f) | 0x30;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  return bytes.toString('hex');
}

/** A stable picture seed for a hand-made player. */
function seedOf(name: string): number {
  return md5(`seed:${name}`).readUInt32BE(0);
}

type Blueprint = Omit<FakePlayer, 'uuid' | 'source' | 'generated' | 'skin' | 'cape'> & {
  skin: Omit<SkinArt, 'seed'> | SkinTrap | null;
  cape?: Omit<CapeArt, 'seed'>;
};

// The test players whose pictures tests read face by face wear the test pattern; the demo
// players (first block) and the rest wear real-looking drawings.
const OFFICIAL: Blueprint[] = [
  { name: 'Knight', slim: false, skin: { look: 'knight' }, cape: { look: 'crimson' } },
  { name: 'Robot', slim: false, skin: { look: 'robot' } },
  { name: 'Astronaut', slim: false, skin: { look: 'astronaut' } },
  { name: 'Ranger', slim: true, skin: { slim: true, look: 'ranger' }, cape: { look: 'forest' } },
  { name: 'Wizard', slim: false, skin: { scale: 2, look: 'wizard' } },
  { name: 'Miner', slim: false, skin: { legacy: true, look: 'miner' } },
  { name: 'ClassicSteve', slim: false, skin: {} },
  { name: 'SlimAlex', slim: true, skin: { slim: true }, cape: {} },
  { name: 'LegacyOld', slim: false, skin: { legacy: true } },
  { name: 'HdPlayer', slim: false, skin: { scale: 2 } },
  // The game draws this name upside down.
  { name: 'Dinnerbone', slim: false, skin: {} },
  { name: 'NoSkin', slim: false, skin: null },
  { name: 'CapeWearer', slim: false, skin: { look: 'knight' }, cape: { legacy: true, look: 'crimson' } },
  { name: 'BothSources', slim: false, skin: { look: 'robot' } },
  { name: 'HangPlayer', slim: false, skin: {}, behaviour: 'hang' },
  { name: 'FailPlayer', slim: false, skin: {}, behaviour: 'fail' },
  { name: 'EvilTexture', slim: false, skin: 'evil' },
  { name: 'RedirectSkin', slim: false, skin: 'redirect' },
  { name: 'NotPng', slim: false, skin: 'notPng' },
  { name: 'HugeSkin', slim: false, skin: 'huge' },
];

const EXTERNAL: Blueprint[] = [
  { name: 'ExternalOnly', slim: true, skin: { slim: true, look: 'ranger' }, cape: { look: 'forest' } },
  { name: 'Ext玩家', slim: false, skin: { look: 'wizard' } },
  { name: 'BothSources', slim: true, skin: { slim: true, look: 'astronaut' } },
];

const UUID_OF: Record<Source, (name: string) => string> = { official: officialUuid, external: offlineUuid };
const GENERATED: Record<Source, RegExp> = { official: /^gen_(\d{1,6})$/i, external: /^ext_(\d{1,6})$/i };
/** Generated UUIDs remembered for profile lookups; old ones are forgotten past this many. */
const MAX_REMEMBERED = 100_000;

function build(source: Source, { skin, cape, ...rest }: Blueprint): FakePlayer {
  const seed = seedOf(`${source}:${rest.name}`);
  return {
    ...rest,
    uuid: UUID_OF[source](rest.name),
    source,
    skin: skin === null || typeof skin === 'string' ? skin : { ...skin, seed },
    cape: cape ? { ...cape, seed: seed + 1 } : null,
    generated: false,
  };
}

/**
 * gen_N / ext_N: a skin of its own (N written into it, colours seeded by source and name); odd N
 * are slim, multiples of 3 wear a cape of their own.
 */
function generate(source: Source, name: string): FakePlayer | undefined {
  const digits = GENERATED[source].exec(name)?.[1];
  if (digits === undefined) return undefined;
  const number = Number(digits);
  const canonical = `${source === 'official' ? 'gen' : 'ext'}_${digits}`;
  const seed = seedOf(`${source}:${canonical}`);
  const slim = number % 2 === 1;
  return {
    name: canonical,
    uuid: UUID_OF[source](canonical),
    source,
    slim,
    skin: { seed, number, slim },
    cape: number % 3 === 0 ? { seed: seed + 1, number } : null,
    generated: true,
  };
}

export class PlayerCatalogue {
  readonly official: readonly FakePlayer[] = OFFICIAL.map((b) => build('official', b));
  readonly external: readonly FakePlayer[] = EXTERNAL.map((b) => build('external', b));
  readonly users: readonly FakeUser[];
  private readonly byNameIndex = new Map<string, FakePlayer>();
  private readonly byUuidIndex = new Map<string, FakePlayer>();
  private readonly remembered = new LruMap<FakePlayer>(MAX_REMEMBERED);

  constructor() {
    for (const p of [...this.official, ...this.external]) {
      this.byNameIndex.set(`${p.source}:${p.name.toLowerCase()}`, p);
      this.byUuidIndex.set(`${p.source}:${p.uuid}`, p);
    }
    const ext = (name: string) => this.byName('external', name)!;
    this.users = [
      {
        uid: 1, nickname: 'demo', email: 'demo@example.org',
        premiumUuid: this.byName('official', 'BothSources')!.uuid,
        players: [{ pid: 1, player: ext('ExternalOnly') }, { pid: 2, player: ext('BothSources') }],
      },
      { uid: 2, nickname: 'plain', email: 'plain@example.org', premiumUuid: null, players: [{ pid: 3, player: ext('Ext玩家') }] },
    ];
  }

  /** Case-insensitive, like both upstreams; generated names are remembered for byUuid. */
  byName(source: Source, name: string): FakePlayer | undefined {
    const known = this.byNameIndex.get(`${source}:${name.toLowerCase()}`);
    if (known) return known;
    const generated = generate(source, name);
    if (generated) this.remember(generated);
    return generated;
  }

  /** Accepts dashed or undashed UUIDs; generated players only once their name was looked up. */
  byUuid(source: Source, uuid: string): FakePlayer | undefined {
    const id = normalizeUuid(uuid);
    if (!id) return undefined;
    const key = `${source}:${id}`;
    return this.byUuidIndex.get(key) ?? this.remembered.get(key);
  }

  user(uid: number): FakeUser | undefined {
    return this.users.find((u) => u.uid === uid);
  }

  private remember(player: FakePlayer): void {
    const key = `${player.source}:${player.uuid}`;
    this.remembered.set(key, player);
  }
}
