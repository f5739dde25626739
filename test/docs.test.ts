// The machine-readable description (/openapi.json) and the page generated from it (/docs).
import test from 'ava';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({ MEDIA_PUBLIC_URL: 'http://media.example.org' });
});
test.after.always(async () => {
  await h?.stop();
});

const SPEC_PATHS = [
  '/v1/player/{name}', '/v1/u/{name}', '/v1/uuid/{name}', '/v1/profile/{uuid}', '/v1/batch', '/v1/decode', '/v1/status', '/v1/sources',
  '/v1/external/announcements', '/v1/external/meta', '/v1/avatar/{name}/{size}', '/v1/body/{name}/{size}', '/v1/render/{name}/{size}',
  '/v1/render/{size}', '/v1/cube/{name}/{size}', '/v1/skin/{name}', '/v1/cape/{name}', '/v1/head/{name}/{size}', '/oauth/external',
  '/oauth/external/callback', '/oauth/logout', '/v1/me', '/v1/me/profiles', '/v1/me/verification', '/v1/me/token', '/status',
  '/v1/search', '/v1/types', '/health', '/v1/admin/keys', '/?img={alias}',
];

test('/openapi.json is an OpenAPI 3.1 document with every endpoint of the specs', async (t) => {
  const r = await h.get('/openapi.json');
  t.is(r.status, 200);
  const doc = r.json;
  t.regex(doc.openapi, /^3\.1\./);
  t.is(typeof doc.info.title, 'string');
  for (const path of SPEC_PATHS) t.truthy(doc.paths[path], path);
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses?: object; operationId?: string }>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === 'servers') continue;
      t.truthy(op.responses && Object.keys(op.responses).length, `${method} ${path} has responses`);
      t.truthy(op.operationId);
    }
  }
  t.is(doc.paths['/?img={alias}'].servers[0].url, 'http://media.example.org');
  t.deepEqual(doc.paths['/v1/render/{name}/{size}'].get.parameters.find((p: { name: string }) => p.name === 'yaw').schema, { type: 'number', default: 0, minimum: -180, maximum: 180 });
  t.truthy(doc.paths['/v1/search'].get.security);
});

test('/docs lists every endpoint with a curl example', async (t) => {
  const r = await h.get('/docs');
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /html/);
  for (const path of SPEC_PATHS.filter((p) => !p.startsWith('/?'))) t.true(r.text.includes(` ${path}</code></h3>`), path);
  t.true(r.text.includes('curl'));
  t.true(r.text.includes('form class="try"'));
});
