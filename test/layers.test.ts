// The layers of api/, renderer/ and shared/ (docs/architecture.md) and the one direction of their
// imports: a module imports from its own layer or a lower one, never from a higher one, and no
// service from another. Read from the sources themselves (static imports, `export ... from`,
// `import()`, type-only imports too), so a new import that points the wrong way fails here.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import ts from 'typescript';
import { ROOT } from './helpers/service.ts';

interface Layer { name: string; rank: number; holds: string[] }

/**
 * Lowest first. A module belongs to the layer whose entry names it most precisely (a file before
 * its folder). Layers of one rank (the services) may not import each other.
 */
const LAYERS: Layer[] = [
  { name: 'shared', rank: 0, holds: ['shared/'] },
  { name: 'renderer', rank: 1, holds: ['renderer/'] },
  {
    name: 'core', rank: 2,
    holds: [
      'api/http/', 'api/docs/', 'api/types/', 'api/cache.ts', 'api/coalesce.ts', 'api/config.ts', 'api/idle-trim.ts', 'api/metrics.ts',
      'api/read-through.ts', 'api/readiness.ts', 'api/redis.ts', 'api/settings.ts', 'api/version.ts',
      // The settings readers a service owns, which the one configuration pass (api/config.ts) calls.
      'api/media/config.ts', 'api/media/password.ts', 'api/skins/upstream/budget.ts', 'api/search/values/phone.ts', 'api/search/plans.ts',
    ],
  },
  {
    // What the composition root hands every service, and the player lookup two services use.
    name: 'shared by services', rank: 3,
    holds: [
      'api/service.ts', 'api/skins/upstreams.ts', 'api/skins/upstream/', 'api/skins/lookup.ts', 'api/skins/name-batcher.ts',
      'api/skins/records.ts', 'api/skins/image-params.ts', 'api/skins/textures.ts', 'api/skins/texture-id.ts', 'api/skins/types.ts', 'api/skins/validate.ts',
    ],
  },
  { name: 'skins service', rank: 4, holds: ['api/skins/'] },
  { name: 'media service', rank: 4, holds: ['api/media/'] },
  { name: 'search service', rank: 4, holds: ['api/search/'] },
  { name: 'document', rank: 5, holds: ['api/docs/openapi.ts', 'api/docs/served.ts'] },
  { name: 'composition', rank: 6, holds: ['api/route-tables.ts', 'api/server.ts', 'api/start.ts', 'api/main.ts', 'api/banner.ts', 'api/relaunch.ts', 'api/v8-flags.ts'] },
];

interface Edge { from: string; to: string; typeOnly: boolean }

function modules(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const name = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return modules(name);
    return /\.(ts|js)$/.test(entry.name) ? [name] : [];
  });
}

/** Every import of a module that names another file of the project. */
function importsOf(file: string): Edge[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const edges: Edge[] = [];
  const add = (specifier: ts.Expression | undefined, typeOnly: boolean) => {
    if (!specifier || !ts.isStringLiteralLike(specifier) || !specifier.text.startsWith('.')) return;
    edges.push({ from: file, to: path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier.text)), typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      // `import { type A } from`, with every name a type, is erased like `import type`.
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      add(node.moduleSpecifier, !!clause && (clause.isTypeOnly || (!clause.name && !!named?.length && named.every((n) => n.isTypeOnly))));
    } else if (ts.isExportDeclaration(node)) {
      add(node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal as ts.Expression, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

function layerOf(file: string): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const layer of LAYERS) {
    for (const entry of layer.holds) {
      const match = entry.endsWith('/') ? file.startsWith(entry) : file === entry;
      if (match && entry.length > (best?.length ?? -1)) best = { layer, length: entry.length };
    }
  }
  return best?.layer;
}

const FILES = ['shared', 'renderer', 'api'].flatMap(modules);
const EDGES = FILES.flatMap(importsOf);

test('every module of api/, renderer/ and shared/ has a layer, and every entry of the table names a module', (t) => {
  t.deepEqual(FILES.filter((file) => !layerOf(file)), []);
  const stale = LAYERS.flatMap((layer) => layer.holds).filter((entry) => !FILES.some((file) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry)));
  t.deepEqual(stale, []);
  t.true(EDGES.length > 500, 'the imports were read');
});

test('no module imports from a higher layer, and no service from another', (t) => {
  const wrong = EDGES.flatMap(({ from, to }) => {
    const [a, b] = [layerOf(from), layerOf(to)];
    if (!a || !b || a === b || b.rank < a.rank) return [];
    return [`${from} (${a.name}) imports ${to} (${b.name})`];
  });
  t.deepEqual(wrong, []);
});

test('the OpenAPI types import nothing of the project', (t) => {
  t.deepEqual(EDGES.filter((e) => e.from === 'api/docs/openapi-types.ts'), []);
  t.true(FILES.includes('api/docs/openapi-types.ts'));
});

test('no cycle among the modules\' runtime imports', (t) => {
  const next = new Map<string, string[]>();
  for (const { from, to, typeOnly } of EDGES) if (!typeOnly) next.set(from, [...next.get(from) ?? [], to]);
  // Depth-first: a module met again while still on the path closes a cycle.
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const walk = (file: string, trail: string[]): void => {
    state.set(file, 'open');
    for (const to of next.get(file) ?? []) {
      if (state.get(to) === 'open') cycles.push([...trail.slice(trail.indexOf(to)), file, to].join(' -> '));
      else if (!state.has(to)) walk(to, [...trail, file]);
    }
    state.set(file, 'done');
  };
  for (const file of FILES) if (!state.has(file)) walk(file, []);
  t.deepEqual(cycles, []);
});
