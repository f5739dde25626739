// One frame for every page of the three services (api/http/page.ts): the same header with links
// to each service's page, the API docs and the status page. A service's address is its public URL
// when configured, else the host the request came to with that service's port; behind a trusted
// proxy an address that is not configured is left out.
import path from 'node:path';
import test from 'ava';
import { removeTempDirs, tempDir } from './helpers/media-library.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';

let direct: RunningApp;
let proxied: RunningApp;
test.before(async () => {
  const dir = await tempDir('pages-layout');
  const common = { SERVICES: 'skins,media,search', MEDIA_PASSWORD: 'layout-media-password', DATA_DIR: path.join(dir, 'data') };
  direct = await startApp({ ...common, MEDIA_DIR: path.join(dir, 'media-1') });
  proxied = await startApp({ ...common, MEDIA_DIR: path.join(dir, 'media-2'), TRUST_PROXY: '1', MEDIA_PUBLIC_URL: 'https://media.example.org' });
});
test.after.always(async () => {
  await direct?.stop();
  await proxied?.stop();
  await removeTempDirs();
});

interface Header { links: Array<[string, string]>; current: string[] }

/** The links of a page's header (label → href) and the labels marked as the current page. */
async function header(url: string, init?: RequestInit): Promise<Header> {
  const page = await call(url, { ...init, headers: { accept: 'text/html', 'accept-language': 'en', ...init?.headers } });
  const bar = /<header class="site">([\s\S]*?)<\/header>/.exec(page.text)?.[1] ?? '';
  const links = [...bar.matchAll(/<a href="([^"]*)"( aria-current="page")?[^>]*>([^<]+)<\/a>/g)].filter((m) => !m[0].includes('lang='));
  return { links: links.map((m) => [m[3], m[1]]), current: links.filter((m) => m[2]).map((m) => m[3]) };
}

test('every page of the three services has the same header; a service without a public URL is linked on this host with its port', async (t) => {
  const { skins, media, search } = direct.urls;
  const everything = (own: 'Skins' | 'Media' | 'Search') => [
    ['Skins', own === 'Skins' ? '/' : `${skins}/`], ['Media', own === 'Media' ? '/' : `${media}/`], ['Search', own === 'Search' ? '/' : `${search}/`],
    ['API docs', own === 'Skins' ? '/docs' : `${skins}/docs`], ['Status', own === 'Skins' ? '/status' : `${skins}/status`],
  ];
  for (const [url, current, expected] of [
    [`${skins}/`, ['Skins'], everything('Skins')],
    [`${skins}/status`, ['Status'], everything('Skins')],
    [`${skins}/docs`, ['API docs'], everything('Skins')],
    [`${media}/`, ['Media'], everything('Media')],
    [`${media}/login`, ['Media'], everything('Media')],
    [`${search}/`, ['Search'], everything('Search')],
  ] as const) {
    const found = await header(url);
    t.deepEqual(found.links, expected, url);
    t.deepEqual(found.current, current, url);
  }
  // A wrong password answers the form again, in the same frame.
  const form = await header(`${media}/login`, { method: 'POST', body: new URLSearchParams({ password: 'wrong' }) });
  t.deepEqual(form.links, everything('Media'));
});

test('configured public URLs are linked as given; behind a trusted proxy an unconfigured address is left out', async (t) => {
  const { skins, media } = proxied.urls;
  const forwarded = { 'x-forwarded-host': 'www.example.org', 'x-forwarded-proto': 'https' };
  const landing = await header(`${skins}/`, { headers: forwarded });
  t.deepEqual(landing.links, [['Skins', '/'], ['Media', 'https://media.example.org/'], ['API docs', '/docs'], ['Status', '/status']],
    'search has no SEARCH_PUBLIC_URL: https://www.example.org:<port> would be a guess');
  const mediaPage = await header(`${media}/`, { headers: forwarded });
  t.deepEqual(mediaPage.links, [['Media', '/']], 'PUBLIC_URL is not set either: no skins link, no docs link');
});
