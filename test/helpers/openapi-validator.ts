// Checks an answer of one of our services against the OpenAPI document: the path template and
// method are found, the status must be documented and a JSON body must match its schema. The
// skins service serves the document (fetched once per base URL); media and search do not, so their
// answers are checked against the document the same code builds here. Schemas are compiled once
// per process and document content.
import { createHash } from 'node:crypto';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;
export interface Answer { status: number; headers: Headers; json: unknown; bytes: Buffer }

const SERVICE = /^Skinfarm-(skins|media|search)\//;

/** An Ajv for OpenAPI 3.1 schemas: 2020-12 plus the formats they use; `example` is an annotation. */
export function openApiAjv(strict = true): Ajv2020 {
  // Strict about keywords (a typo fails); not Ajv's own style rules such as a type beside every properties.
  const ajv = new Ajv2020({ strict, strictTypes: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addKeyword('example');
  return ajv;
}

const served = new Map<string, Promise<Json>>();
let local: Promise<Json> | undefined;

async function documentFor(service: string, origin: string): Promise<Json> {
  if (service !== 'skins') return local ??= buildLocally();
  let doc = served.get(origin);
  if (!doc) {
    doc = fetch(`${origin}/openapi.json`).then(async (r) => {
      if (r.status !== 200) throw new Error(`${origin}/openapi.json answered ${r.status}`);
      return r.json() as Promise<Json>;
    });
    served.set(origin, doc);
    // A failed fetch (the service was stopped) is not kept: a later service may take the port.
    doc.catch(() => served.delete(origin));
  }
  return doc;
}

async function buildLocally(): Promise<Json> {
  const [{ loadConfig }, { buildOpenApi }, { ROUTE_TABLES }] = await Promise.all([
    import('../../api/config.ts'), import('../../api/docs/openapi.ts'), import('../../api/route-tables.ts'),
  ]);
  return buildOpenApi(loadConfig({}), ROUTE_TABLES) as unknown as Json;
}

/** Compiled schemas of one document content (servers aside, which differ per port). */
class CompiledDocument {
  private readonly ajv = openApiAjv();
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly id: string;

  constructor(doc: Json, key: string) {
    this.id = `https://skinfarm.invalid/openapi/${key}.json`;
    // The document is the container the schemas' #/components/... references point into.
    this.ajv.addKeyword('components').addKeyword('paths');
    this.ajv.addSchema({ $id: this.id, components: doc.components, paths: doc.paths }, undefined, undefined, false);
  }

  validator(pointer: string[]): ValidateFunction {
    const fragment = pointer.map((p) => encodeURIComponent(p.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/');
    let validate = this.validators.get(fragment);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${this.id}#/${fragment}` });
      this.validators.set(fragment, validate);
    }
    return validate;
  }
}

const compiled = new Map<string, CompiledDocument>();
function compile(doc: Json): CompiledDocument {
  const text = JSON.stringify({ ...doc, servers: null }, (key, value) => (key === 'servers' ? undefined : value));
  const key = createHash('sha256').update(text).digest('hex').slice(0, 16);
  let entry = compiled.get(key);
  if (!entry) compiled.set(key, entry = new CompiledDocument(doc, key));
  return entry;
}

const templateRegex = (template: string) =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);

/** The path item a request path falls under on one service: literal paths before templates. */
function findPath(doc: Json, service: string, path: string): string | undefined {
  const candidates = Object.keys(doc.paths).filter((template) =>
    (doc.paths[template].servers ?? doc.servers).some((s: Json) => s['x-service'] === service) && templateRegex(template).test(path));
  return candidates.sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))[0];
}

/** The node at a JSON pointer (as keys) and where it really is once a $ref is followed. */
function follow(doc: Json, pointer: string[]): { pointer: string[]; node: Json } {
  const node = pointer.reduce((n: Json, key) => n?.[key], doc);
  if (typeof node?.$ref !== 'string') return { pointer, node };
  return follow(doc, node.$ref.slice(2).split('/').map((k: string) => k.replaceAll('~1', '/').replaceAll('~0', '~')));
}

/** The documented answer to a request that matched no operation (described in info.description). */
function unrouted(method: string, template: string | undefined, status: number): { name: string; what: string } {
  // Preflights count in the `site` group: past its quota one is refused like any request.
  if (method === 'options') return status === 429 ? { name: 'PreflightLimited', what: 'a preflight over its quota' } : { name: 'Preflight', what: 'an OPTIONS preflight' };
  if (template) return { name: 'MethodNotAllowed', what: `a method that ${template} does not list` };
  return { name: 'RouteNotFound', what: 'a path the document does not list for this service' };
}

/**
 * Throws when the answer breaks the document. Answers of anything that is not one of our services
 * (the fake upstream, a proxy in front) are not checked.
 */
export async function checkAnswer(url: string, method: string, answer: Answer): Promise<void> {
  const service = SERVICE.exec(answer.headers.get('x-powered-by') ?? '')?.[1];
  if (!service) return;
  const { origin, pathname } = new URL(url);
  const doc = await documentFor(service, origin).catch(() => (local ??= buildLocally()));
  const verb = method.toLowerCase();
  const request = `${method.toUpperCase()} ${pathname} (${service})`;
  const template = findPath(doc, service, pathname);
  const item = template ? doc.paths[template] : undefined;
  // Koa answers HEAD with the GET route, without a body, where no HEAD is described.
  const opVerb = item?.[verb] ? verb : verb === 'head' && item?.get ? 'get' : undefined;

  let pointer: string[];
  if (opVerb && verb !== 'options') {
    const statuses = Object.keys(item![opVerb].responses);
    const status = [String(answer.status), `${String(answer.status)[0]}XX`, 'default'].find((s) => statuses.includes(s));
    if (!status) {
      throw new Error(`OpenAPI: ${request} answered ${answer.status}, which ${opVerb.toUpperCase()} ${template} does not document (it lists ${statuses.join(', ')})`);
    }
    pointer = ['paths', template!, opVerb, 'responses', status];
  } else {
    const rule = unrouted(verb, template, answer.status);
    pointer = ['components', 'responses', rule.name];
    const expected = follow(doc, pointer).node?.['x-status'];
    if (answer.status !== expected) throw new Error(`OpenAPI: ${request} is ${rule.what}, documented as ${expected}, but answered ${answer.status}`);
  }

  const response = follow(doc, pointer);
  const where = pointer.join(' ');
  if (verb === 'head' || !response.node.content || answer.bytes.length === 0) return;
  const type = (answer.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  const mediaType = [type, `${type.split('/')[0]}/*`, '*/*'].find((t) => t in response.node.content);
  if (!mediaType) throw new Error(`OpenAPI: ${request} answered ${answer.status} as ${type || 'no content type'}; ${where} documents ${Object.keys(response.node.content).join(', ')}`);
  if (!/[/+]json$/.test(mediaType) || answer.json === undefined) return;
  const validate = compile(doc).validator([...response.pointer, 'content', mediaType, 'schema']);
  if (!validate(answer.json)) {
    const problems = (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params && 'allowedValues' in e.params ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}`);
    throw new Error(`OpenAPI: ${request} answered ${answer.status}; the body does not match ${where} ${mediaType}:\n  ${problems.join('\n  ')}\nbody: ${JSON.stringify(answer.json).slice(0, 600)}`);
  }
}
