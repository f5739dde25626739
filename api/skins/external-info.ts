// The external service's public information: announcements (HTML cleaned to a small tag
// whitelist) and its Yggdrasil metadata, both cached.
import sanitizeHtml from 'sanitize-html';
import type { Cache, CacheNamespace } from '../cache.ts';
import { Coalescer } from '../coalesce.ts';
import type { ExternalSource, RawAnnouncement, YggdrasilMetadata } from './upstream/external.ts';

const ALLOWED_TAGS = ['p', 'br', 'ul', 'ol', 'li', 'strong', 'b', 'em', 'i', 'u', 's', 'code', 'pre', 'blockquote', 'a', 'h1', 'h2', 'h3', 'h4', 'span', 'hr'];

/** Keeps the whitelisted tags; no attributes but a link's http(s) href; scripts dropped whole. */
export function cleanHtml(html: string): string {
  return sanitizeHtml(html, {
    allowedTags: ALLOWED_TAGS,
    allowedAttributes: { a: ['href', 'title'] },
    allowedSchemes: ['http', 'https'],
    allowedSchemesAppliedToAttributes: ['href'],
    allowProtocolRelative: false,
    disallowedTagsMode: 'discard',
    nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'iframe', 'object', 'embed'],
    transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow', target: '_blank' }) },
  }).trim();
}

export interface Announcement {
  id: string; title: string; content: string; color: string; severity: string; priority: number; expand: boolean; timestamp: number; time_text: string;
}

const TIME_TEXT = new Intl.DateTimeFormat('sv-SE', {
  timeZone: 'UTC', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
});

export function toAnnouncement(raw: RawAnnouncement): Announcement {
  const seconds = Math.floor(Number(raw.timestamp) || 0);
  return {
    id: String(raw.id ?? ''),
    title: sanitizeHtml(String(raw.title), { allowedTags: [], allowedAttributes: {} }),
    content: cleanHtml(String(raw.content ?? '')),
    color: String(raw.color ?? 'blue'),
    severity: String(raw.severity ?? 'info'),
    priority: Math.trunc(Number(raw.priority) || 0),
    expand: raw.expand === true,
    timestamp: seconds,
    time_text: `${TIME_TEXT.format(new Date(seconds * 1000))} UTC`,
  };
}

/** `fresh=1` refetches the announcements at most this often per instance. */
export const FRESH_REFETCH_MS = 10_000;

export class ExternalInfo {
  private readonly source: ExternalSource;
  private readonly announcementsCache: CacheNamespace<Announcement[]>;
  private readonly metaCache: CacheNamespace<YggdrasilMetadata>;
  private readonly inflight = new Coalescer();
  private lastForced = Number.NEGATIVE_INFINITY;

  constructor(source: ExternalSource, cache: Cache) {
    this.source = source;
    this.announcementsCache = cache.namespace('announcements');
    this.metaCache = cache.namespace('meta');
  }

  /**
   * Announcements by priority (highest first), then newest first. `fresh` refetches once per
   * FRESH_REFETCH_MS: a client cannot turn it into an upstream call per request; within the
   * window it shares the refetch in flight, or gets the copy it brought.
   */
  async announcements(fresh: boolean): Promise<Announcement[]> {
    const force = fresh && performance.now() - this.lastForced >= FRESH_REFETCH_MS;
    if (force) this.lastForced = performance.now();
    else if (fresh) {
      const running = this.inflight.current<Announcement[]>(this.announcementsCache.name);
      if (running) return running;
    }
    return this.load(this.announcementsCache, force, async () => {
      const items = (await this.source.announcements()).map(toAnnouncement);
      return items.sort((a, b) => b.priority - a.priority || b.timestamp - a.timestamp);
    });
  }

  async metadata(): Promise<YggdrasilMetadata> {
    return this.load(this.metaCache, false, () => this.source.metadata());
  }

  private async load<T>(ns: CacheNamespace<T>, force: boolean, fetch: () => Promise<T>): Promise<T> {
    // Read even when forced: a failed refetch still answers with the copy we have.
    const entry = await ns.get('all');
    if (!force && entry?.freshness === 'fresh') return entry.value;
    return this.inflight.run(ns.name, async () => {
      try {
        const value = await fetch();
        await ns.set('all', value);
        return value;
      } catch (error) {
        if (entry) return entry.value;
        throw error;
      }
    });
  }

  metaRecord(metadata: YggdrasilMetadata) {
    const root = this.source.urls.yggdrasilUrl;
    return {
      api_root: root,
      auth_url: `${root}/authserver`,
      session_url: `${root}/sessionserver`,
      homepage: metadata.meta.links?.homepage ?? this.source.urls.url,
      register: metadata.meta.links?.register ?? `${this.source.urls.url}/auth/register`,
      metadata,
    };
  }
}
