// The nine built-in skins the game shows for players without one (docs/upstream.md A6), in our own
// simple art: skin tone, hair, shirt, trousers and shoes per character, slim or classic arms.
import { DEFAULT_SKIN_NAMES, type DefaultSkinName } from '../shared/skin-layout.ts';
import { paintSkin, type Rgba } from './skin-paint.ts';
import { pixelHash, type NormalizedSkin } from './skin-normalize.ts';

interface Palette { skin: Rgba; hair: Rgba; shirt: Rgba; trousers: Rgba; shoes: Rgba; eyes: Rgba }

const rgb = (hex: number): Rgba => [(hex >> 16) & 255, (hex >> 8) & 255, hex & 255, 255];

const PALETTES: Record<DefaultSkinName, Palette> = {
  alex: { skin: rgb(0xf2c9a0), hair: rgb(0xd9752b), shirt: rgb(0x6aa84f), trousers: rgb(0x7a5230), shoes: rgb(0x4a4a4a), eyes: rgb(0x2e7d32) },
  ari: { skin: rgb(0xe8b48f), hair: rgb(0x3b2a1f), shirt: rgb(0xd04a6b), trousers: rgb(0x2f3e6b), shoes: rgb(0x222222), eyes: rgb(0x4e342e) },
  efe: { skin: rgb(0x8d5a3b), hair: rgb(0x1b1b1b), shirt: rgb(0xf2b705), trousers: rgb(0x3c3c3c), shoes: rgb(0x7b1e1e), eyes: rgb(0x3e2723) },
  kai: { skin: rgb(0xc68642), hair: rgb(0x2b1d14), shirt: rgb(0x1e88e5), trousers: rgb(0x5d4037), shoes: rgb(0x263238), eyes: rgb(0x1a237e) },
  makena: { skin: rgb(0x6b4226), hair: rgb(0x120d0a), shirt: rgb(0x8e24aa), trousers: rgb(0x37474f), shoes: rgb(0xbf360c), eyes: rgb(0x3e2723) },
  noor: { skin: rgb(0xd9a27a), hair: rgb(0x4a2c1a), shirt: rgb(0x00897b), trousers: rgb(0x455a64), shoes: rgb(0x3e2723), eyes: rgb(0x33691e) },
  steve: { skin: rgb(0xc89778), hair: rgb(0x3d2916), shirt: rgb(0x2aa7a7), trousers: rgb(0x3b3b9c), shoes: rgb(0x555555), eyes: rgb(0x4f3ab8) },
  sunny: { skin: rgb(0xf5cfa8), hair: rgb(0xf2d16b), shirt: rgb(0xef6c00), trousers: rgb(0x1565c0), shoes: rgb(0xeeeeee), eyes: rgb(0x0277bd) },
  zuri: { skin: rgb(0x5a3825), hair: rgb(0x0d0d0d), shirt: rgb(0xc62828), trousers: rgb(0x212121), shoes: rgb(0xfafafa), eyes: rgb(0x4e342e) },
};

function paint(name: DefaultSkinName, slim: boolean): NormalizedSkin {
  const p = PALETTES[name];
  const data = paintSkin(1, slim, (part, layer, face, u, v, _w, h) => {
    if (layer === 'outer') return null;
    switch (part) {
      case 'head':
        if (face === 'top' || face === 'back') return p.hair;
        if (face === 'bottom') return p.skin;
        if (v < 2 || (face !== 'front' && v < 4)) return p.hair;
        if (face === 'front' && v === 4 && (u === 1 || u === 6)) return p.eyes;
        if (face === 'front' && v === 4 && (u === 2 || u === 5)) return rgb(0xffffff);
        return p.skin;
      case 'body':
        return p.shirt;
      case 'rightArm':
      case 'leftArm':
        return face === 'top' || v < (face === 'bottom' ? 0 : 4) ? p.shirt : p.skin;
      default:
        return face === 'bottom' || v >= h - 2 ? p.shoes : p.trousers;
    }
  });
  return { data, size: 64, legacy: false, slimGuess: slim, hash: pixelHash(data) };
}

const cache = new Map<string, NormalizedSkin>();

/** A default skin by name; slim per the game's table (indices 0-8 slim) unless told otherwise. */
export function defaultSkin(name: string, slim = true): NormalizedSkin {
  const known = (DEFAULT_SKIN_NAMES as readonly string[]).includes(name) ? (name as DefaultSkinName) : 'steve';
  const key = `${known}:${slim}`;
  let skin = cache.get(key);
  if (!skin) {
    skin = paint(known, slim);
    cache.set(key, skin);
  }
  return skin;
}
