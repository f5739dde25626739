// What /ready says about the skins service's own parts: the render farm (critical: when it cannot
// draw, no 3D image can be drawn here, while another instance may) and each upstream as its
// calls found it (degraded only: every instance shares it); and what the image library (sharp)
// can encode, which /status shows.
import sharp from 'sharp';
import type { Farm } from '../../renderer/farm.ts';
import type { ReadinessCheck } from '../readiness.ts';
import type { SourceHealth } from './upstream/health.ts';

export function farmCheck(farm: () => Farm | null): ReadinessCheck {
  return {
    name: 'render_farm',
    critical: true,
    run() {
      const current = farm();
      if (!current) return { status: 'ok', detail: 'off (RENDER_WORKERS=0): avatars and textures only' };
      // Not pages alive alone: pages that are all up but cannot draw (a wedged GPU process, a
      // browser that cannot start again) make the farm down too.
      const { state, detail } = current.health();
      return { status: state, detail: `${detail}, ${current.stats().queued} queued` };
    },
  };
}

export function upstreamCheck(health: SourceHealth): ReadinessCheck {
  return {
    name: `upstream_${health.id}`,
    critical: false,
    run() {
      const s = health.snapshot();
      if (!s.enabled) return { status: 'ok', detail: 'switched off' };
      if (s.circuit?.state === 'open') return { status: 'degraded', detail: `circuit open, retry in ${s.circuit.retry_in_s} s; stale entries are served` };
      if (!s.ok) return { status: 'degraded', detail: `${s.consecutive_failures} failures in a row: ${s.last_error ?? 'unknown'}` };
      return { status: 'ok', detail: s.latency_ms === null ? 'no call yet' : `${Math.round(s.latency_ms)} ms` };
    },
  };
}

/** Each encoder the answers use: PNG (every still), WebP and AVIF (stills), GIF and WebP (turntables). */
export const ENCODERS = ['png', 'webp', 'avif', 'gif'] as const;
export type Encoder = (typeof ENCODERS)[number];
/** sharp's name of what it decodes (AVIF is read as HEIF). */
const DECODED_AS: Record<Encoder, string> = { png: 'png', webp: 'webp', avif: 'heif', gif: 'gif' };

export interface ImageLibraryState {
  sharp: string; vips: string;
  /** null where the encoder wrote a picture sharp reads back; else why not. */
  encoders: Record<Encoder, string | null>;
}

async function tryEncoder(encoder: Encoder): Promise<string | null> {
  try {
    const picture = sharp({ create: { width: 2, height: 2, channels: 4, background: { r: 40, g: 90, b: 160, alpha: 0.5 } } });
    const bytes = await (encoder === 'png' ? picture.png() : encoder === 'gif' ? picture.gif() : picture[encoder]({ lossless: true })).toBuffer();
    const { format } = await sharp(bytes).metadata();
    return format === DECODED_AS[encoder] ? null : `read back as ${format}`;
  } catch (error) {
    return (error as Error).message;
  }
}

// Tried once per process: what libvips was built with does not change while it runs.
let tried: Promise<ImageLibraryState> | null = null;

/** sharp's versions and whether each encoder writes a 2 x 2 picture it reads back. */
export function imageLibrary(): Promise<ImageLibraryState> {
  tried ??= (async () => {
    const results = await Promise.all(ENCODERS.map(tryEncoder));
    return { sharp: sharp.versions.sharp, vips: sharp.versions.vips, encoders: Object.fromEntries(ENCODERS.map((e, i) => [e, results[i]])) as ImageLibraryState['encoders'] };
  })();
  return tried;
}

/**
 * The image library as /ready reports it: down (critical) when PNG, which every still and the
 * avatars use, cannot be written; degraded when another format cannot (those answers fail alone).
 */
export function imageLibraryCheck(): ReadinessCheck {
  return {
    name: 'image_library',
    critical: true,
    async run() {
      const { sharp: version, vips, encoders } = await imageLibrary();
      const failing = ENCODERS.filter((e) => encoders[e] !== null);
      if (failing.length === 0) return { status: 'ok', detail: `sharp ${version} (libvips ${vips}): ${ENCODERS.join(', ')}` };
      const detail = failing.map((e) => `${e}: ${encoders[e]}`).join('; ');
      return { status: failing.includes('png') ? 'down' : 'degraded', detail };
    },
  };
}
