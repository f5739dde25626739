// Pages of a category's files (GET /categories/{alias}/files, like Picsum's /v2/list): which
// files a page holds, and the RFC 8288 Link header that walks the pages. The order is the
// category's listing order (library.ts), where new files come last: a client paging while files
// are added sees each file once.
import type { MediaFile } from './types.ts';

/** Files per page: `limit` takes 1 to max. */
export const PAGE_LIMIT = { fallback: 30, max: 100 } as const;
/** The highest page asked for; far past any library (100 million files at 100 a page). */
export const MAX_PAGE = 1_000_000;

export interface Page { files: readonly MediaFile[]; page: number; limit: number; total: number; pages: number }

/** Page `page` (from 1) of `limit` files; past the last page, none. */
export function pageOf(listing: readonly MediaFile[], page: number, limit: number): Page {
  const start = (page - 1) * limit;
  return { files: listing.slice(start, start + limit), page, limit, total: listing.length, pages: Math.ceil(listing.length / limit) };
}

/**
 * The first, last, previous and next pages as a Link header over `url` (the request's address):
 * its other query parameters stay, so a `token=` goes on working on every page.
 */
export function pageLinks(url: URL, { page, pages, limit }: Page): string {
  const last = Math.max(pages, 1);
  const links: Array<[rel: string, page: number]> = [['first', 1], ['last', last]];
  if (page > 1) links.push(['prev', Math.min(page - 1, last)]);
  if (page < pages) links.push(['next', page + 1]);
  return links.map(([rel, n]) => {
    const target = new URL(url);
    target.searchParams.set('page', String(n));
    target.searchParams.set('limit', String(limit));
    return `<${target.href}>; rel="${rel}"`;
  }).join(', ');
}
