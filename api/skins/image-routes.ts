// Image endpoints: GET avatar/head/body/render/cube of a player, POST render of an uploaded skin.
import { createHash } from 'node:crypto';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { MAX_SKIN_BYTES } from '../../shared/skin-layout.ts';
import { queryParam } from '../http/body.ts';
import { singleFileForm } from '../http/multipart.ts';
import { optionsKey, parseImageOptions, type ImageKind } from './image-params.ts';
import { imageEtag, sendPng } from './image-response.ts';
import { profileOrDemoFallback } from './pages/demo-fallback.ts';
import type { SkinsService } from './service.ts';
import { parseSource } from './validate.ts';

interface UploadedFile { buffer: Buffer; size: number }

export function imageRouter(service: SkinsService, limit: Middleware): Router {
  const router = new Router();

  const image = (kind: ImageKind): Middleware => async (ctx) => {
    const options = parseImageOptions(ctx, kind);
    const source = parseSource(queryParam(ctx, 'source'));
    const { profile, fallback } = await profileOrDemoFallback(ctx.params.name, service.config.demoPlayer, async () => (await service.lookup.find(ctx.params.name, source)).value);
    await service.images.reply(ctx, profile, options);
    if (fallback) {
      ctx.set('Cache-Control', 'no-store');
      ctx.set('X-Demo-Fallback', fallback);
    }
  };
  for (const kind of ['avatar', 'head', 'body', 'render', 'cube'] as const) {
    router.get(`/v1/${kind}/:name`, limit, image(kind));
    router.get(`/v1/${kind}/:name/:size`, limit, image(kind));
  }

  // Render parameters are short: 1 KiB a field is plenty and keeps 20 fields small.
  const upload = singleFileForm('file', { fileSize: MAX_SKIN_BYTES, fields: 20, fieldSize: 1024 });
  router.post('/v1/render/:size', limit, upload, async (ctx: Context) => {
    const file = (ctx as Context & { file?: UploadedFile }).file;
    if (!file) throw new ApiError('missing_param', { detail: 'file (multipart/form-data)' });
    const fields = (ctx.request as { body?: Record<string, string> }).body ?? {};
    // Form fields count like query parameters so one parser validates both.
    for (const [name, value] of Object.entries(fields)) {
      // A field given twice, or in both the form and the query, is as ambiguous as a repeated parameter.
      if (typeof value !== 'string' || ctx.query[name] !== undefined) throw new ApiError('bad_request', { detail: { zh: `${name} 只能出现一次`, en: `${name} is given more than once` } });
      ctx.query = { ...ctx.query, [name]: value };
    }
    const model = queryParam(ctx, 'model');
    if (model !== undefined && model !== 'classic' && model !== 'slim') throw new ApiError('bad_request', { detail: { zh: 'model 只能是 classic 或 slim', en: 'model must be classic or slim' } });
    const options = parseImageOptions(ctx, 'render');
    const png = await service.images.drawUpload(file.buffer, model === undefined ? null : model === 'slim', options);
    // From the uploaded bytes and the options: two uploads never share a tag.
    const uploadHash = createHash('sha256').update(file.buffer).digest('base64url');
    sendPng(ctx, { png, etag: imageEtag('upload', uploadHash, model ?? 'guess', optionsKey(options)), cache: 'MISS' });
    // An upload is nobody's permanent image: nothing may keep it.
    ctx.set('Cache-Control', 'no-store');
  });

  return router;
}
