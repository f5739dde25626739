// Conditional GET: whether a request's If-None-Match names the ETag an answer would carry.

/** Whether an If-None-Match value names this ETag (strong or weak). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  return !!ifNoneMatch && ifNoneMatch.split(',').some((t) => t.trim() === etag || t.trim() === `W/${etag}`);
}
