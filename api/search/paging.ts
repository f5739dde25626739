// Paging through the main pass's rows: `limit` and `offset`, or an opaque `cursor` from the
// previous answer. A cursor is signed (HMAC under a key derived from the audit secret), so a client
// cannot edit it, and carries the query's keyed hash (a cursor of another query is refused) and
// the data version it was made on (a page read after a re-import or a rebuild says so).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../shared/errors.ts';
import type { PlanFigures } from './plans.ts';
import { MAIN_RECORD_LIMIT } from './pipeline.ts';
import type { TypedValue } from './types.ts';

/** Rows a page at most whatever the plan (a plan allows fewer: PlanFigures.page_rows). */
export const PAGE_ROWS_MAX = 1000;
/** The furthest offset a page may start at: each page passes over `offset` rows first; export reads past it. */
export const OFFSET_MAX = 100_000;
/** `page.total` counts to here, then says `total_capped` (the database counts no further). */
export const PAGE_TOTAL_CAP = 1000;

/** Where a page starts and how long it is, and the data version its cursor was made on. */
export interface PageRequest { offset: number; limit: number; version?: string | null }

export interface PageInfo {
  offset: number;
  limit: number;
  /** Rows of the paged sources (local_index) on this page. */
  returned: number;
  total: number;
  total_capped: boolean;
  has_more: boolean;
  next_cursor: string | null;
  /** The data changed since the cursor was made: rows may have moved between pages. */
  data_changed: boolean;
}

const MAX_CURSOR = 512;

/** 400 `bad_request` naming the field of a query string or a body that is wrong, and how. */
export function bad(field: string, en: string, zh: string): ApiError {
  return new ApiError('bad_request', { detail: { zh: `${field}：${zh}`, en: `${field}: ${en}` } });
}

/** An integer of a JSON body (a query string's was read by its Param schema already). */
export function integerField(fields: Record<string, unknown>, name: string, min: number, max: number): number | undefined {
  const value = fields[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw bad(name, `must be an integer from ${min} to ${max}`, `必须是 ${min} 到 ${max} 之间的整数`);
  }
  return value;
}

/** A page's row count against the key's plan. */
export function checkLimit(limit: number, figures: PlanFigures, field = 'limit'): number {
  if (limit > figures.page_rows) throw bad(field, `at most ${figures.page_rows} rows a page on this key's plan`, `此密钥的套餐每页最多 ${figures.page_rows} 行`);
  return limit;
}

export class Cursors {
  private readonly key: Buffer;

  constructor(secret: string) {
    // A key of its own: a cursor's signature never doubles as an audit line's hash.
    this.key = createHmac('sha256', secret).update('search cursor').digest();
  }

  /** The query's identity in a cursor: keyed, so a cursor shown around tells nobody the query. */
  private queryId(query: TypedValue): string {
    return createHmac('sha256', this.key).update(`${query.type}:${query.value}`).digest('base64url').slice(0, 16);
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }

  make(query: TypedValue, offset: number, limit: number, version: string | null): string {
    const payload = Buffer.from(JSON.stringify({ o: offset, l: limit, q: this.queryId(query), v: version })).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /** The page a cursor names; 400 naming `cursor` for garbage, an edited one or another query's. */
  read(cursor: string, query: TypedValue): PageRequest {
    const invalid = () => bad('cursor', 'not a cursor of this query (use page.next_cursor of its previous answer)', '不是此查询的游标（请使用上一页答复的 page.next_cursor）');
    const [payload, signature, ...rest] = cursor.length <= MAX_CURSOR ? cursor.split('.') : [];
    if (!payload || !signature || rest.length) throw invalid();
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    const { o, l, q, v } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { o: number; l: number; q: string; v: string | null };
    if (q !== this.queryId(query)) throw invalid();
    return { offset: o, limit: l, version: v };
  }
}

/**
 * The page a search asks for, from its fields (a query string's read by their Param schemas, a
 * JSON body's checked here): a cursor, or offset and limit; a cursor with an offset is ambiguous.
 */
export function readPage(fields: Record<string, unknown>, query: TypedValue, figures: PlanFigures, cursors: Cursors): PageRequest {
  const limit = integerField(fields, 'limit', 1, PAGE_ROWS_MAX);
  const offset = integerField(fields, 'offset', 0, OFFSET_MAX);
  const cursor = fields.cursor;
  if (cursor === undefined || cursor === null || cursor === '') {
    return { offset: offset ?? 0, limit: checkLimit(limit ?? Math.min(MAIN_RECORD_LIMIT, figures.page_rows), figures) };
  }
  if (typeof cursor !== 'string') throw bad('cursor', 'must be a string', '必须是字符串');
  if (offset !== undefined) throw bad('cursor', 'give a cursor or an offset, not both', '游标与 offset 只能给出其一');
  const page = cursors.read(cursor, query);
  // A limit beside the cursor replaces the cursor's.
  return { ...page, limit: checkLimit(limit ?? page.limit, figures) };
}
