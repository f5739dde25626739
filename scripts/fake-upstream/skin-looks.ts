// Real-looking demo skins in our own art, drawn from code: a knight, a robot, an astronaut, a
// ranger (slim), a wizard (meant for HD: the beard, trim and stars are drawn per pixel) and a
// miner (fits the legacy 64x32 format: nothing on the lower half), and two capes. A look is a
// function of where a texel is; every coordinate is in 64-unit texels, fractional in HD.
import type { FaceName, Layer, PartName } from '../../shared/skin-layout.ts';
import type { Rgba } from '../../renderer/skin-paint.ts';

export const SKIN_LOOKS = ['knight', 'robot', 'astronaut', 'ranger', 'wizard', 'miner'] as const;
export type SkinLook = (typeof SKIN_LOOKS)[number];
export const CAPE_LOOKS = ['crimson', 'forest'] as const;
export type CapeLook = (typeof CAPE_LOOKS)[number];

/** Where a texel is: its face and its centre (x, y) on a face w x h, all in 64-unit texels. */
export interface Texel { part: PartName; layer: Layer; face: FaceName; x: number; y: number; w: number; h: number }
type Look = (t: Texel) => Rgba | null;

const rgb = (hex: number): Rgba => [(hex >> 16) & 255, (hex >> 8) & 255, hex & 255, 255];

/** A fixed pseudo-random number in [0, 1) per texel position, for cloth and metal grain. */
function grain(x: number, y: number, salt: number): number {
  let n = Math.floor(x * 8) * 374761393 + Math.floor(y * 8) * 668265263 + salt * 2147483647;
  n = (n ^ (n >>> 13)) * 1274126177;
  return ((n ^ (n >>> 16)) >>> 0) / 4294967296;
}

/** The colour a little lighter or darker: grain, and light from above (top faces bright, bottoms dark). */
function shaded([r, g, b, a]: Rgba, t: Texel, amount = 0.08): Rgba {
  const light = t.face === 'top' ? 1.12 : t.face === 'bottom' ? 0.75 : t.face === 'back' ? 0.9 : 1;
  const f = light * (1 - amount / 2 + grain(t.x, t.y, t.part.length + t.face.length) * amount);
  const c = (v: number) => Math.max(0, Math.min(255, Math.round(v * f)));
  return [c(r), c(g), c(b), a];
}

const within = (v: number, from: number, to: number) => v >= from && v < to;
const isSide = (face: FaceName) => face === 'left' || face === 'right';
const isLimbSide = (t: Texel) => t.face !== 'top' && t.face !== 'bottom';

interface Face { skin: Rgba; hair: Rgba; eyes: Rgba }

/** A person's head: hair on top and back, a fringe, eyes with whites, a mouth line. */
function humanHead(t: Texel, p: Face): Rgba {
  if (t.face === 'top' || t.face === 'back') return shaded(p.hair, t);
  if (t.face === 'bottom') return shaded(p.skin, t, 0.04);
  if (t.y < 2 || (isSide(t.face) && t.y < 4 && t.x > 3)) return shaded(p.hair, t);
  if (t.face === 'front' && within(t.y, 4, 5)) {
    if (within(t.x, 1, 2) || within(t.x, 6, 7)) return rgb(0xf4f4f4);
    if (within(t.x, 2, 3) || within(t.x, 5, 6)) return p.eyes;
  }
  if (t.face === 'front' && within(t.y, 6, 7) && within(t.x, 3, 5)) return shaded(rgb(0x9a5a4a), t, 0.02);
  return shaded(p.skin, t, 0.04);
}

const STEEL = rgb(0x9aa3ad);
const DARK_STEEL = rgb(0x5c636b);

const knight: Look = (t) => {
  const face = { skin: rgb(0xe0ac8a), hair: rgb(0x4a3020), eyes: rgb(0x2b4c7e) };
  if (t.part === 'head') {
    if (t.layer === 'inner') return humanHead(t, face);
    // A closed helm: a red plume on top, an eye slit and breathing holes in front.
    if (t.face === 'top' && within(t.x, 3, 5)) return shaded(rgb(0xc0282d), t);
    if (t.face === 'bottom') return null;
    if (t.face === 'front') {
      if (within(t.y, 3, 4) && (within(t.x, 1, 3.5) || within(t.x, 4.5, 7))) return rgb(0x15171a);
      if (within(t.y, 5, 7) && within(t.x, 2, 6) && Math.floor(t.x) % 2 === 0 && Math.floor(t.y) === 5) return rgb(0x2a2e33);
      if (within(t.x, 3.5, 4.5) && t.y >= 3) return shaded(DARK_STEEL, t);
    }
    return shaded(t.y < 1 ? rgb(0xb8c0c8) : STEEL, t, 0.14);
  }
  if (t.part === 'body') {
    if (t.layer === 'inner') return shaded((Math.floor(t.x) + Math.floor(t.y)) % 2 ? STEEL : DARK_STEEL, t, 0.1);
    // A blue tabard with a golden cross, over a brown belt.
    if (!(t.face === 'front' || t.face === 'back')) return null;
    if (within(t.y, 8, 9)) return shaded(rgb(0x5a3a1e), t);
    if (t.y < 1) return null;
    const cross = within(t.x, 3, 5) || within(t.y, 3, 5);
    return shaded(cross && t.y < 8 ? rgb(0xe0b22e) : rgb(0x1f4fa0), t);
  }
  if (t.layer === 'outer') return null;
  const isArm = t.part === 'rightArm' || t.part === 'leftArm';
  if (isArm && t.y >= 9 && isLimbSide(t)) return shaded(DARK_STEEL, t);
  if (!isArm && t.y >= 10 && isLimbSide(t)) return shaded(rgb(0x3a2a1c), t);
  if (isLimbSide(t) && (within(t.y, 3, 4) || within(t.y, 6, 7))) return shaded(DARK_STEEL, t);
  return shaded(STEEL, t, 0.14);
};

const ROBOT = rgb(0xa8b4c0);
const robot: Look = (t) => {
  if (t.layer === 'outer') {
    // An antenna light on top of the head.
    return t.part === 'head' && t.face === 'top' && within(t.x, 3, 5) && within(t.y, 3, 5) ? rgb(0xff3b30) : null;
  }
  if (t.part === 'head') {
    if (t.face === 'front') {
      if (within(t.x, 1, 7) && within(t.y, 2, 6)) {
        if (within(t.y, 3, 4) && (within(t.x, 2, 3) || within(t.x, 5, 6))) return rgb(0x40e0ff);
        if (within(t.y, 5, 5.6) && within(t.x, 2.5, 5.5)) return rgb(0x1fa8c8);
        return rgb(0x101820);
      }
    }
    if (isSide(t.face) && within(t.x, 3, 5) && within(t.y, 3, 5)) return shaded(rgb(0x6b7785), t);
    return shaded(ROBOT, t, 0.12);
  }
  if (t.part === 'body') {
    if (t.face === 'front' && within(t.x, 2, 6) && within(t.y, 2, 7)) {
      if (within(t.y, 3, 4)) return [rgb(0xff3b30), rgb(0xffcc00), rgb(0x34c759), rgb(0x0a84ff)][Math.floor(t.x) - 2];
      return rgb(0x202a34);
    }
    if (within(t.y, 9, 10)) return shaded(rgb(0xf0a020), t);
    return shaded(ROBOT, t, 0.12);
  }
  const joint = isLimbSide(t) && (within(t.y, 4, 5) || within(t.y, 8, 9));
  if (joint) return shaded(rgb(0x4a5560), t);
  if (t.y >= 10 && isLimbSide(t)) return shaded(rgb(0x5e6b78), t);
  return shaded(ROBOT, t, 0.12);
};

const SUIT = rgb(0xeef0f2);
const astronaut: Look = (t) => {
  const face = { skin: rgb(0xc68c5a), hair: rgb(0x20160f), eyes: rgb(0x3b2414) };
  if (t.part === 'head') {
    if (t.layer === 'inner') return humanHead(t, face);
    // The helmet: white shell, a gold visor with a glint.
    if (t.face === 'bottom') return null;
    if (t.face === 'front' && within(t.x, 1, 7) && within(t.y, 2, 7)) {
      return within(t.x, 1.5, 3) && within(t.y, 2.5, 3.5) ? rgb(0xfff2c0) : shaded(rgb(0xc9962e), t, 0.06);
    }
    return shaded(SUIT, t, 0.05);
  }
  if (t.layer === 'outer') {
    // A life-support pack on the back.
    return t.part === 'body' && t.face === 'back' && within(t.x, 1, 7) && within(t.y, 1, 9) ? shaded(rgb(0x8a9099), t) : null;
  }
  if (t.part === 'body') {
    if (t.face === 'front' && within(t.x, 2, 6) && within(t.y, 3, 6)) {
      if (within(t.y, 4, 5)) return [rgb(0xd0302a), rgb(0x2d6fd0), rgb(0x2fae4a), rgb(0xf0c020)][Math.floor(t.x) - 2];
      return rgb(0x5a6270);
    }
    if (t.face === 'front' && within(t.x, 0.5, 2) && within(t.y, 0.5, 2)) return rgb(0x2d4fa0);
    return shaded(SUIT, t, 0.06);
  }
  if (isLimbSide(t) && within(t.y, 4, 5)) return shaded(rgb(0xe05a20), t);
  if (isLimbSide(t) && t.y >= 10) return shaded(rgb(0x7d848c), t);
  return shaded(SUIT, t, 0.06);
};

const ranger: Look = (t) => {
  const face = { skin: rgb(0xf0c8a0), hair: rgb(0x8a4a20), eyes: rgb(0x2e7d32) };
  const hood = rgb(0x2f6b34);
  if (t.part === 'head') {
    if (t.layer === 'inner') return humanHead(t, face);
    if (t.face === 'bottom') return null;
    if (t.face === 'front') return t.y < 1.5 || t.x < 1 || t.x >= 7 ? shaded(hood, t) : null;
    if (isSide(t.face)) return t.y < 6 || (t.face === 'right' ? t.x < 4 : t.x >= 4) ? shaded(hood, t) : null;
    return shaded(hood, t);
  }
  if (t.layer === 'outer') return null;
  if (t.part === 'body') {
    if (within(t.y, 8, 9)) return shaded(rgb(0x3a2414), t);
    // A quiver strap across the chest.
    if (t.face === 'front' && Math.abs(t.x - t.y) < 1) return shaded(rgb(0x4a2e18), t);
    return shaded(rgb(0x8b5a2b), t, 0.12);
  }
  const isArm = t.part === 'rightArm' || t.part === 'leftArm';
  if (isArm) return shaded(isLimbSide(t) && t.y >= 9 ? rgb(0x5a3a1e) : hood, t);
  return shaded(isLimbSide(t) && t.y >= 9 ? rgb(0x4a2e18) : rgb(0x33402a), t);
};

const ROBE = rgb(0x4b2a8c);
const wizard: Look = (t) => {
  const face = { skin: rgb(0xf2c9a8), hair: rgb(0xe8e8ec), eyes: rgb(0x3a5fb0) };
  const stars = () => (grain(t.x * 3, t.y * 3, 7) > 0.985 ? rgb(0xffe680) : null);
  if (t.part === 'head') {
    if (t.layer === 'inner') {
      // A long white beard with waves, drawn per pixel in HD.
      if (t.face === 'front' && t.y >= 5.5 && !(within(t.y, 6, 7) && within(t.x, 3, 5))) {
        return Math.sin(t.x * 5 + t.y * 2) > 0.7 ? rgb(0xcfd0d6) : rgb(0xf4f4f8);
      }
      return humanHead(t, face);
    }
    if (t.face === 'bottom' || (t.face === 'front' && t.y >= 2)) return null;
    if (isSide(t.face) || t.face === 'back') {
      if (t.y >= 2) return null;
      if (within(t.y, 1.5, 2)) return rgb(0xe0b22e);
    }
    if (t.face === 'front' && within(t.y, 1.5, 2)) return rgb(0xe0b22e);
    return stars() ?? shaded(ROBE, t, 0.1);
  }
  if (t.layer === 'outer') return null;
  if (t.part === 'body') {
    if (within(t.y, 7.5, 8.5)) return within(t.x, 3.5, 4.5) && t.face === 'front' ? rgb(0xf7e08a) : rgb(0xe0b22e);
    if (t.face === 'front' && within(t.x, 3.75, 4.25) && t.y >= 8.5) return rgb(0xe0b22e);
    return stars() ?? shaded(ROBE, t, 0.1);
  }
  const isArm = t.part === 'rightArm' || t.part === 'leftArm';
  if (isArm && t.y >= 10.5 && isLimbSide(t)) return shaded(face.skin, t, 0.04);
  if (isArm && within(t.y, 9.5, 10.5) && isLimbSide(t)) return rgb(0xe0b22e);
  if (!isArm && t.y >= 10.5 && isLimbSide(t)) return shaded(rgb(0x4a3020), t);
  return stars() ?? shaded(isArm ? ROBE : rgb(0x3d2273), t, 0.1);
};

const miner: Look = (t) => {
  const face = { skin: rgb(0xd9a27a), hair: rgb(0x3b2a1f), eyes: rgb(0x4e342e) };
  if (t.part === 'head') {
    if (t.layer === 'inner') return humanHead(t, face);
    // A yellow hard hat with a lamp; the legacy format keeps the hat layer of the head.
    if (t.face === 'front' && within(t.x, 3, 5) && t.y < 2) return rgb(0xfff6c8);
    if (t.face === 'bottom' || t.y >= 2) return t.face === 'top' ? shaded(rgb(0xf2c200), t) : null;
    return shaded(rgb(0xf2c200), t);
  }
  if (t.part === 'body') {
    // Overalls over a red flannel shirt.
    if (t.y >= 6 || ((t.face === 'front' || t.face === 'back') && (within(t.x, 1, 2) || within(t.x, 6, 7)))) return shaded(rgb(0x2f5a9c), t);
    return shaded((Math.floor(t.x / 2) + Math.floor(t.y / 2)) % 2 ? rgb(0xb03028) : rgb(0x7a1e1a), t, 0.05);
  }
  const isArm = t.part === 'rightArm' || t.part === 'leftArm';
  if (isArm) {
    if (t.y >= 10 && isLimbSide(t)) return shaded(face.skin, t, 0.04);
    return shaded((Math.floor(t.x / 2) + Math.floor(t.y / 2)) % 2 ? rgb(0xb03028) : rgb(0x7a1e1a), t, 0.05);
  }
  return shaded(t.y >= 10 && isLimbSide(t) ? rgb(0x4a2e18) : rgb(0x2f5a9c), t);
};

export const LOOKS: Record<SkinLook, Look> = { knight, robot, astronaut, ranger, wizard, miner };

/** Capes: a red one with a golden border, a green one with a leather hem (on the face seen from behind). */
export function capeLook(look: CapeLook, face: FaceName, u: number, v: number): Rgba {
  const t: Texel = { part: 'body', layer: 'inner', face, x: u + 0.5, y: v + 0.5, w: 10, h: 16 };
  if (look === 'crimson') {
    const border = face === 'front' && (u === 0 || u === 9 || v === 0 || v === 15);
    return shaded(border ? rgb(0xe0b22e) : rgb(0xa01c22), t, 0.1);
  }
  return shaded(face === 'front' && v >= 14 ? rgb(0x5a3a1e) : rgb(0x2f6b34), t, 0.1);
}
