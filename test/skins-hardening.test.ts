// Issue #39, "Smaller": what an upstream says is held to our rules before it is used, and no page
// can be framed. Through the real services and the fake upstream:
// - a gamertag from GeyserMC's Global API that is no Xbox gamertag is the upstream's error, never
//   a player name;
// - without TEXTURE_HOSTS, the external metadata's skinDomains widen the texture allow-list only
//   to public host names: loopback names and IP literals in any spelling are never fetched from;
// - every HTML route of the three services' route tables answers with frame-ancestors 'none',
//   X-Frame-Options: DENY and nosniff (/docs with its own, stricter policy).
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { domainToASCII } from 'node:url';
import test from 'ava';
import { BEDROCK_PLAYERS } from '../scripts/fake-upstream/bedrock.ts';
import { ROUTE_TABLES } from '../api/route-tables.ts';
import { publicSkinDomain, TextureFetcher } from '../api/skins/textures.ts';
import { UpstreamClient } from '../api/skins/upstream/client.ts';
import { SourceHealth } from '../api/skins/upstream/health.ts';
import { isPublicAddress, publicOnlyLookup } from '../api/skins/upstream/public-lookup.ts';
import { removeTempDirs, tempDir } from './helpers/media-library.ts';
import { call } from './helpers/service.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const REDIRECT = 'http://127.0.0.1:1/oauth/external/callback';

/** The hostile metadata: every entry names this machine or a private network. */
const HOSTILE_DOMAINS = [
  '127.0.0.1', 'localhost', '2130706433', '0x7f.1', '0177.0.0.1', '127.1', '0x7f000001', '[::1]', '::1',
  'foo.localhost', 'printer.local', 'db.internal', 'intranet', '.localhost', '.cn', '10.0.0.1', '169.254.169.254',
];
/** Spellings of the fake's own address (127.0.0.1) that its texture URLs can be written with. */
const LOOPBACK_SPELLINGS = ['127.0.0.1', 'localhost', '2130706433', '0x7f.1', '0177.0.0.1', '127.1', '0x7f000001'];

let pages: SkinsHarness;
let domains: SkinsHarness;
test.before(async () => {
  const dir = await tempDir('hardening');
  [pages, domains] = await Promise.all([
    // All three services; OAuth configured, so the login callback is a real route. A failed
    // upstream answer is not remembered and opens no circuit: each request below asks again.
    startSkins({
      SERVICES: 'skins,media,search', MEDIA_DIR: path.join(dir, 'media'), DATA_DIR: path.join(dir, 'data'), MEDIA_PASSWORD: 'hardening-media-password',
      OAUTH_CLIENT_ID: 'hardening', OAUTH_CLIENT_SECRET: 'hardening-secret', OAUTH_REDIRECT_URL: REDIRECT,
      UPSTREAM_ERROR_TTL_MS: '0', UPSTREAM_CIRCUIT_FAILURES: '0',
    }),
    // No TEXTURE_HOSTS: the allow-list is textures.minecraft.net plus the metadata's skinDomains,
    // which the service reads once (so the knob is set before the fake listens).
    startSkins({ TEXTURE_HOSTS: '', UPSTREAM_ERROR_TTL_MS: '0', UPSTREAM_CIRCUIT_FAILURES: '0' }, { control: { external: { skinDomains: HOSTILE_DOMAINS } } }),
  ]);
});
test.after.always(async () => {
  await pages?.stop();
  await domains?.stop();
  await removeTempDirs();
});

const dashed = (xuid: number) => `00000000-0000-0000-${xuid.toString(16).padStart(16, '0').replace(/^(.{4})/, '$1-')}`;

test.serial('a gamertag from the Global API that breaks the gamertag rule is the upstream\'s error, never a name', async (t) => {
  const steve = BEDROCK_PLAYERS.find((p) => p.gamertag === 'BedrockSteve')!;
  const uuid = dashed(steve.xuid);
  const bad = ['<script>x</script>', 'a/b', 'Robot"onload=1', 'Tab\there', 'Ünïcode', 'SeventeenLetters1', ' Lead', 'Trail ', 'Two  Spaces', 'x_y', '.Dotted', '\u202eevil'];
  for (const gamertag of bad) {
    pages.fake.control({ bedrockGamertag: gamertag });
    for (const route of [`/v1/player/${uuid}`, `/v1/profile/${uuid}?source=bedrock`]) {
      const r = await pages.get(route);
      t.is(r.status, 502, `${JSON.stringify(gamertag)} ${route}`);
      t.is(r.json.code, 'upstream_error', JSON.stringify(gamertag));
      const written = gamertag.replaceAll(' ', '_').slice(0, 15);
      t.false(r.text.includes(written) || r.text.includes(JSON.stringify(written).slice(1, -1)), `${JSON.stringify(gamertag)} is not echoed`);
    }
  }
  // The real gamertag (letters, digits, one space) is a name again.
  pages.fake.control({ bedrockGamertag: null });
  const ranger = BEDROCK_PLAYERS.find((p) => p.gamertag === 'Pocket Ranger')!;
  const ok = await pages.get(`/v1/player/${dashed(ranger.xuid)}`);
  t.is(ok.status, 200);
  t.is(ok.json.data.name, '.Pocket_Ranger');
  pages.fake.control({ bedrockGamertag: 'Gamer 42' });
  const renamed = await pages.get(`/v1/player/${uuid}`);
  t.is(renamed.status, 200);
  t.is(renamed.json.data.name, '.Gamer_42');
  pages.fake.control({ bedrockGamertag: null });
});

test.serial('without TEXTURE_HOSTS, loopback and IP-literal skinDomains are refused: the texture is never fetched', async (t) => {
  const meta = await domains.get('/v1/external/meta');
  t.deepEqual(meta.json.data.metadata.skinDomains, HOSTILE_DOMAINS, 'the metadata really lists them');
  for (const [i, host] of LOOPBACK_SPELLINGS.entries()) {
    // A player of its own for each spelling: its profile, and so its texture URL, is new.
    domains.fake.control({ external: { textureHost: host } });
    domains.fake.resetCalls();
    const r = await domains.get(`/v1/skin/ext_${900 + i}?source=external`);
    const profile = domains.fake.requests().find((q) => q.route === 'external.profile');
    t.truthy(profile, `${host}: the profile was looked up`);
    t.is(r.status, 502, host);
    t.is(r.json?.code, 'upstream_error', host);
    t.false('external.texture' in domains.fake.calls(), `${host}: no texture request reached the fake`);
  }
  domains.fake.control({ external: { textureHost: null } });
});

test('publicSkinDomain takes public host names only', (t) => {
  for (const entry of [...HOSTILE_DOMAINS, '[::ffff:127.0.0.1]', '::ffff:7f00:1', '1.2.3.999999999', 'foo.123', 'x.home.arpa', 'metadata.google.internal', 'a.lan',
    'example.com:8080', 'user@example.com', 'example.com/x', '', '.', 'a..b', '-a.example.com', 'localhost.', 42, null]) {
    t.is(publicSkinDomain(entry), null, JSON.stringify(entry));
  }
  t.is(publicSkinDomain('littleskin.cn'), 'littleskin.cn');
  t.is(publicSkinDomain('.LittleSkin.cn'), '.littleskin.cn');
  t.is(publicSkinDomain('skin.prinzeugen.net'), 'skin.prinzeugen.net');
  t.is(publicSkinDomain('皮肤.中国'), domainToASCII('皮肤.中国'), 'an IDN as punycode');
});

test('a texture host from skinDomains is connected to only at a public address: a name resolving to loopback fails before any request', async (t) => {
  for (const address of ['127.0.0.1', '::1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', 'fe80::1', 'fc00::1', '::ffff:127.0.0.1', '224.0.0.1']) {
    t.false(isPublicAddress(address), address);
  }
  for (const address of ['1.1.1.1', '93.184.216.34', '2606:4700::1111']) t.true(isPublicAddress(address), address);

  // The system resolver itself: `localhost` (a public-looking name pointed at 127.0.0.1 is the
  // same case; publicSkinDomain refuses this one by name, which is not what is tested here).
  const lookup = publicOnlyLookup();
  const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup('localhost', { all: true }, (error) => resolve(error)));
  t.is(refused?.code, 'ENOTFOUND');

  // A real texture server on loopback: fetched when the allow-list is the operator's, never when it came from an upstream.
  const server = http.createServer((_req, res) => res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0])));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  let requests = 0;
  server.on('request', () => { requests += 1; });
  const url = `http://localhost:${(server.address() as AddressInfo).port}/texture/abc`;
  const fetcher = (publicOnly: boolean) =>
    new TextureFetcher(new UpstreamClient(new SourceHealth('textures', true), { timeoutMs: 5000, retries: 0, userAgent: 'test' }), async () => ['localhost'], 1 << 20, publicOnly);
  // Refused first: a kept-alive socket from the allowed fetch would be reused without a lookup.
  const error = await t.throwsAsync(fetcher(true).fetch(url));
  t.is((error as { code?: string }).code, 'upstream_error');
  t.is(requests, 0, 'no request reached the loopback server');
  t.is((await fetcher(false).fetch(url)).length, 10);
  t.is(requests, 1);
});

/** Every route whose answer (or error answer) is an HTML page, from the route tables. */
const HTML_ROUTES = ROUTE_TABLES.flatMap((table) => table.routes
  .filter((r) => r.doc.ok.content?.['text/html'] || r.doc.htmlErrors || Object.values(r.doc.more ?? {}).some((m) => m.content?.['text/html']))
  .map((r) => ({ service: table.service, method: r.method, path: r.path })));

test('every HTML page of the three services refuses framing and sniffing', async (t) => {
  t.true(HTML_ROUTES.some((r) => r.service === 'media' && r.path === '/login' && r.method === 'get'), 'the media login form is walked');
  t.deepEqual([...new Set(HTML_ROUTES.map((r) => r.service))].sort(), ['media', 'search', 'skins']);
  for (const route of HTML_ROUTES) {
    t.false(route.path.includes('{'), `${route.path}: an HTML route with a path parameter needs a value here`);
    const url = `${pages.app.urls[route.service]}${route.path}`;
    // A post is a form a browser sends (an empty one: the page comes back with the reason).
    const init: RequestInit = { method: route.method.toUpperCase(), headers: { accept: 'text/html', 'accept-language': 'en' } };
    if (route.method === 'post') init.body = new URLSearchParams();
    const r = await call(url, init);
    const name = `${route.service} ${route.method.toUpperCase()} ${route.path} (${r.status})`;
    t.regex(r.headers.get('content-type') ?? '', /^text\/html/, name);
    t.is(r.headers.get('x-frame-options'), 'DENY', name);
    t.is(r.headers.get('x-content-type-options'), 'nosniff', name);
    const policy = r.headers.get('content-security-policy') ?? '';
    t.true(policy.split(';').map((d) => d.trim()).includes("frame-ancestors 'none'"), `${name}: ${policy}`);
    if (route.path === '/docs') t.regex(policy, /script-src /, '/docs keeps its own policy');
    else t.is(policy, "frame-ancestors 'none'", name);
  }
});
