// Texture files of both upstreams, the trap responses, and the "evil" host (the fake's own port
// under the name localhost) that a client with a host allow-list must never reach.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { redirect, sendBytes, sendJson } from './http.ts';
import type { FakeContext, FakeRoute } from './state.ts';
import { drawTexture, evilBase, textureByHash, trapOf } from './textures.ts';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const HUGE_CHUNKS = 48; // 48 x 64 KiB = 3 MiB

async function serveTexture(ctx: FakeContext): Promise<void> {
  const [hash] = ctx.params;
  switch (trapOf(hash)) {
    case 'redirect':
      return redirect(ctx.res, `${evilBase(ctx.state.baseUrl)}/redirected.png`);
    case 'notPng':
      return sendBytes(ctx.res, 200, 'text/html; charset=utf-8', '<!doctype html><title>Not a PNG</title><p>This is a web page.</p>');
    case 'huge': {
      // Streamed without Content-Length: only a reader that counts bytes as they arrive stops it.
      const chunk = Buffer.alloc(64 * 1024);
      ctx.res.writeHead(200, { 'content-type': 'image/png' });
      const body = Readable.from((function* () {
        yield PNG_SIGNATURE;
        for (let i = 0; i < HUGE_CHUNKS; i++) yield chunk;
      })());
      return pipeline(body, ctx.res).catch(() => undefined); // the client hanging up is the point
    }
  }
  const texture = await textureByHash(hash);
  if (!texture) return sendJson(ctx.res, 404, { error: 'Not Found', path: ctx.url.pathname });
  sendBytes(ctx.res, 200, 'image/png', texture.png);
}

async function serveEvil(ctx: FakeContext): Promise<void> {
  const { png } = await drawTexture({ kind: 'skin', spec: { seed: 666 } });
  sendBytes(ctx.res, 200, 'image/png', png);
}

export const textureRoutes: FakeRoute[] = [
  { method: 'GET', pattern: /^\/official\/textures\/texture\/([^/]+)$/, key: 'official.texture', handler: serveTexture },
  { method: 'GET', pattern: /^\/external\/textures\/([^/]+)$/, key: 'external.texture', handler: serveTexture },
  { method: 'GET', pattern: /^\/evil\/.+$/, key: 'evil', handler: serveEvil },
];
