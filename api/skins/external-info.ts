// The external service's public information: announcements (HTML cleaned to a small tag
// whitelist) and its Yggdrasil metadata, both cached.
import sanitizeHtml from 'sanitize-html';
import type { Cache } from '../cache.ts';
import { ReadThrough } from '../read-through.ts';
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
  private readonly announcementsCache: ReadThrough<Announcement[]>;
  private readonly metaCache: ReadThrough<YggdrasilMetadata>;
  private lastForced = Number.NEGATIVE_INFINITY;

  constructor(source: ExternalSource, cache: Cache) {
    this.source = source;
    this.announcementsCache = new ReadThrough(cache.namespace('announcements'));
    this.metaCache = new ReadThrough(cache.namespace('meta'));
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
      const running = this.announcementsCache.current('all');
      if (running) return (await running).value;
    }
    const answer = await this.announcementsCache.get('all', async () => {
      const items = (await this.source.announcements()).map(toAnnouncement);
      return items.sort((a, b) => b.priority - a.priority || b.timestamp - a.timestamp);
    }, { force });
    return answer.value;
  }

  async metadata(): Promise<YggdrasilMetadata> {
    return (await this.metaCache.get('all', () => this.source.metadata())).value;
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
