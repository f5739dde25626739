// A real headless Chromium for tests of the service's pages, started the way the render farm
// starts its own (renderer/browser.ts), and pages that collect whatever goes wrong in them.
import type { Browser, Page } from 'puppeteer-core';
import { launchBrowser, type LaunchedBrowser } from '../../renderer/browser.ts';
import { silentLogger } from '../../shared/log.ts';

export function startBrowser(): Promise<LaunchedBrowser> {
  return launchBrowser(process.env.CHROMIUM_PATH ?? null, 'off', silentLogger);
}

/** A new page and the console errors, page errors and (if asked) failed requests seen in it. */
export async function openPage(browser: Browser, viewport: { width: number; height: number }, options: { failedRequests?: boolean } = {}): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  await page.setViewport(viewport);
  const errors: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  if (options.failedRequests) page.on('requestfailed', (request) => errors.push(`failed: ${request.url()}`));
  return { page, errors };
}
