// A thread of the texture pool (texture-threads.ts): reads one skin or cape as skin-normalize.ts
// does in the API thread, and moves its pixels back instead of copying them.
import { Piscina, transferableSymbol, valueSymbol } from 'piscina';
import { RenderError } from './errors.ts';
import { readCape, readSkin } from './skin-normalize.ts';
import type { TextureAnswer, TextureTask } from './texture-threads.ts';

export default async function read({ kind, png }: TextureTask) {
  const file = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  let texture: { data: Buffer };
  try {
    texture = kind === 'skin' ? await readSkin(file) : await readCape(file);
  } catch (error) {
    if (error instanceof RenderError) return { refused: { kind: error.kind, en: error.message, zh: error.zh } } satisfies TextureAnswer<never>;
    throw error;
  }
  // Only a buffer that is the whole of its memory can be moved (small ones share Node's pool).
  const { data } = texture;
  const own = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : Buffer.from(data);
  return Piscina.move({
    get [transferableSymbol]() { return [own.buffer]; },
    get [valueSymbol]() { return { texture: { ...texture, data: own } } satisfies TextureAnswer<{ data: Buffer }>; },
  });
}
