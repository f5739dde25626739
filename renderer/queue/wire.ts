// What travels over the broker between an API instance and a render node. One message body is a
// frame: a 4-byte length, a small JSON header, then raw bytes the header describes by length. A
// job carries its options, deadline and id in the header and the skin's and cape's RGBA as bytes
// (no base64: 16 KiB for a 64 px skin); an answer carries the PNG (or a turntable's PNGs) as bytes,
// or an error kind and message.
import type { RenderErrorKind } from '../errors.ts';
import type { RenderJob } from '../jobs.ts';
import type { NormalizedCape, NormalizedSkin } from '../skin-normalize.ts';

/** The durable queue every node consumes and every API instance publishes to. */
export const RENDER_QUEUE = 'skinfarm.render';
/** The fanout exchange nodes publish their reports to; each API instance binds a queue of its own. */
export const STATUS_EXCHANGE = 'skinfarm.render.status';
/** How often a node reports itself. */
export const REPORT_EVERY_MS = 2000;

interface Texture { key: string; width: number; height: number; bytes: number }
interface JobHeader { id: string; sentAt: number; deadline: number; job: Omit<RenderJob, 'skin' | 'cape'>; skin: Texture; cape: Texture | null }

/** A job as a node reads it: the render job (textures rebuilt from their bytes), its id, when it was sent and its deadline (ms since the epoch, the sender's clock). */
export interface QueuedJob { id: string; sentAt: number; deadline: number; job: RenderJob }

export type Answer = { images: Buffer[]; frames: boolean } | { error: { kind: RenderErrorKind; message: string; zh: string } };

function frame(header: object, parts: Buffer[]): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(json.length);
  return Buffer.concat([length, json, ...parts]);
}

/** The header and a reader of the bytes after it, in order. */
function unframe<T>(body: Buffer): { header: T; take(n: number): Buffer } {
  const length = body.readUInt32BE(0);
  const header = JSON.parse(body.subarray(4, 4 + length).toString('utf8')) as T;
  let at = 4 + length;
  return {
    header,
    take(n) {
      if (at + n > body.length) throw new Error('a render message is shorter than its header says');
      const part = body.subarray(at, at + n);
      at += n;
      return part;
    },
  };
}

export function encodeJob({ id, sentAt, deadline, job }: QueuedJob): Buffer {
  const { skin, cape, ...rest } = job;
  const header: JobHeader = {
    id, sentAt, deadline, job: rest,
    skin: { key: skin.hash, width: skin.size, height: skin.size, bytes: skin.data.length },
    cape: cape ? { key: cape.hash, width: cape.width, height: cape.height, bytes: cape.data.length } : null,
  };
  return frame(header, cape ? [skin.data, cape.data] : [skin.data]);
}

export function decodeJob(body: Buffer): QueuedJob {
  const { header, take } = unframe<JobHeader>(body);
  // What the farm reads of a texture is its pixels, size and key (toWireJob); the rest is the API's.
  const skin: NormalizedSkin = { data: take(header.skin.bytes), size: header.skin.width, hash: header.skin.key, legacy: false, slimGuess: false };
  const cape: NormalizedCape | null = header.cape ? { data: take(header.cape.bytes), width: header.cape.width, height: header.cape.height, hash: header.cape.key } : null;
  return { id: header.id, sentAt: header.sentAt, deadline: header.deadline, job: { ...header.job, skin, cape } };
}

export function encodeAnswer(answer: Answer): Buffer {
  if ('error' in answer) return frame({ error: answer.error }, []);
  return frame({ sizes: answer.images.map((i) => i.length), frames: answer.frames }, answer.images);
}

export function decodeAnswer(body: Buffer): Answer {
  const { header, take } = unframe<{ sizes?: number[]; frames?: boolean; error?: { kind: RenderErrorKind; message: string; zh: string } }>(body);
  if (header.error) return { error: header.error };
  // Copies: a PNG kept in the render cache must not hold the whole message alive.
  return { images: (header.sizes ?? []).map((n) => Buffer.from(take(n))), frames: header.frames === true };
}
