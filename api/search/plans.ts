// What a key's plan allows: searches a minute, rows a page, queries a bulk request, rows an
// export. Each plan has its figures in configuration (SEARCH_PLANS); a key may carry overrides of
// its own (null = its plan's figure). A settings reader of the core layer: api/config.ts reads
// SEARCH_PLANS with it, so it imports nothing of the search service.
import type { Config } from '../config.ts';

export const PLANS = ['basic', 'premium'] as const;
export type Plan = typeof PLANS[number];

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

export type Figure = keyof PlanFigures;

export const DEFAULT_PLAN_FIGURES: Record<Plan, PlanFigures> = {
  basic: { searches_per_minute: 120, page_rows: 100, bulk_size: 10, export_rows: 0 },
  premium: { searches_per_minute: 1200, page_rows: 500, bulk_size: 100, export_rows: 100_000 },
};

/**
 * What a plan or a key may set each figure to. Hard bounds, whatever the operator asks: a page
 * past 1,000 rows or a bulk request past 100 queries holds one request's memory and time beyond
 * what the deadline and the per-key concurrency were sized for.
 */
export const FIGURE_BOUNDS: Record<Figure, { min: number; max: number }> = {
  searches_per_minute: { min: 1, max: 1_000_000 },
  page_rows: { min: 1, max: 1000 },
  bulk_size: { min: 1, max: 100 },
  export_rows: { min: 0, max: 10_000_000 },
};

export const FIGURES = Object.keys(FIGURE_BOUNDS) as Figure[];

/** The figure when `value` is an integer within its bounds, else undefined. */
export function figureValue(figure: Figure, value: unknown): number | undefined {
  const { min, max } = FIGURE_BOUNDS[figure];
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max ? value : undefined;
}

export const figureRule = (figure: Figure) => `an integer from ${FIGURE_BOUNDS[figure].min} to ${FIGURE_BOUNDS[figure].max}`;

/** The plans as SEARCH_PLANS writes them: `plan:figure=N,…;plan:…`. */
export function showPlans(plans: Record<string, PlanFigures>): string {
  return Object.entries(plans).map(([plan, figures]) => `${plan}:${FIGURES.map((f) => `${f}=${figures[f]}`).join(',')}`).join(';');
}

/**
 * SEARCH_PLANS: the defaults with the figures the text names replaced, e.g.
 * `basic:searches_per_minute=60;premium:page_rows=1000,export_rows=0`; undefined when a plan, a
 * figure or a value is not one there is (a typo must not leave a plan at its default unnoticed).
 */
export function parsePlans(text: string): Record<Plan, PlanFigures> | undefined {
  const plans = structuredClone(DEFAULT_PLAN_FIGURES);
  for (const part of text.split(';').map((p) => p.trim()).filter(Boolean)) {
    const match = /^([a-z]+)\s*:(.*)$/.exec(part);
    if (!match || !Object.hasOwn(plans, match[1])) return undefined;
    const figures = plans[match[1] as Plan];
    for (const pair of match[2].split(',').map((p) => p.trim()).filter(Boolean)) {
      const [name, value, ...rest] = pair.split('=').map((s) => s.trim());
      if (rest.length || !Object.hasOwn(FIGURE_BOUNDS, name) || !/^\d{1,9}$/.test(value ?? '')) return undefined;
      const figure = figureValue(name as Figure, Number(value));
      if (figure === undefined) return undefined;
      figures[name as Figure] = figure;
    }
  }
  return plans;
}

/**
 * The figures that apply to a key: its plan's, then its own overrides. A bulk request counts each
 * query against the key's rate, so one larger than searches_per_minute could never run: bulk_size
 * is held to it (refused as too big, not as 429 for ever).
 */
export function planFigures(config: Config, record: { plan: Plan } & { [F in Figure]?: number | null }): PlanFigures {
  const plan = config.search.plans[record.plan];
  const searchesPerMinute = record.searches_per_minute ?? plan.searches_per_minute;
  return {
    searches_per_minute: searchesPerMinute,
    page_rows: record.page_rows ?? plan.page_rows,
    bulk_size: Math.min(record.bulk_size ?? plan.bulk_size, searchesPerMinute),
    export_rows: record.export_rows ?? plan.export_rows,
  };
}
