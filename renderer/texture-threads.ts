// Large textures are normalized on a small pool of threads, not on the API's event loop: a
// 1024 px skin plus a cape cost ~25-70 ms of JavaScript (unfiltering, the alpha rules, the hash),
// during which no other request was answered. Small ones (the usual 64 px skin) stay inline,
// where they cost less than a round trip to a thread.
import os from 'node:os';
import { Piscina } from 'piscina';
import { RenderError, type RenderErrorKind } from './errors.ts';
import { pngPixels } from './png-decode.ts';

/** Up to this many pixels a texture is read in the thread that asks (about 0.3 ms of work). */
const INLINE_PIXELS = 128 * 128;

export type TextureKind = 'skin' | 'cape';
export interface TextureTask { kind: TextureKind; png: Uint8Array }
/** What a thread answers: the texture, or the RenderError it refused the file with (classes do not cross threads). */
export type TextureAnswer<T> = { texture: T } | { refused: { kind: RenderErrorKind; en: string; zh: string } };

let pool: Piscina<TextureTask, TextureAnswer<{ data: Uint8Array }>> | null = null;

/** Made at the first large texture; its threads end when idle, so most processes never start one. */
function threads(): Piscina<TextureTask, TextureAnswer<{ data: Uint8Array }>> {
  pool ??= new Piscina({
    filename: new URL('./texture-worker.ts', import.meta.url).href,
    minThreads: 0,
    // A core or two at most: the render pages draw on the others.
    maxThreads: Math.min(2, Math.max(1, os.availableParallelism() - 1)),
    idleTimeout: 30_000,
    // A waiting task holds its PNG (2 MB at most): a bounded queue bounds that memory.
    maxQueue: 64,
    // Never 'sync': an idle thread would sit in Atomics.wait (see renderer/page-worker.ts).
    atomics: 'disabled',
    // A guard: pixels live outside the heap.
    resourceLimits: { maxOldGenerationSizeMb: 64 },
  });
  return pool;
}

/** Whether `png` is worth a thread. */
export function readsOffThread(png: Buffer): boolean {
  return pngPixels(png) > INLINE_PIXELS;
}

/** The texture `kind` of `png`, normalized on a pool thread; refusals come back as the same RenderError. */
export async function normalizeOffThread<T extends { data: Buffer }>(kind: TextureKind, png: Buffer): Promise<T> {
  const pool = threads();
  if (pool.queueSize >= pool.options.maxQueue) {
    throw new RenderError('queue_full', 'too many textures are being decoded', { zh: '正在解码的材质过多', retryAfterSeconds: 1 });
  }
  let answer: TextureAnswer<{ data: Uint8Array }>;
  try {
    answer = await pool.run({ kind, png });
  } catch (error) {
    // The thread died under it (out of memory, ended): not the file's fault as far as we know.
    throw new RenderError('failed', `the ${kind} could not be decoded`, { zh: '材质解码失败', cause: error });
  }
  if ('refused' in answer) throw new RenderError(answer.refused.kind, answer.refused.en, { zh: answer.refused.zh });
  const { data } = answer.texture;
  // Pixels cross threads as a plain Uint8Array (moved, not copied).
  return { ...answer.texture, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength) } as unknown as T;
}
