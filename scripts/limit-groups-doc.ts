// The rate-limit groups of every route, as the route tables declare them (api/route-tables.ts,
// routeLimit): written by `npm run config-docs` into docs/security.md between its markers, so the
// page lists every group with its routes and quota as the service applies them.
// test/config-docs.test.ts fails when the section is stale.
import path from 'node:path';
import { loadConfig } from '../api/config.ts';
import { quotaGroup, routeLimit } from '../api/http/route-table.ts';
import { ROUTE_TABLES } from '../api/route-tables.ts';

export const SECURITY_PAGE = path.join(import.meta.dirname, '../docs/security.md');
export const BEGIN = '<!-- limit-groups: written by `npm run config-docs` from the route tables; change them, not this table -->';
export const END = '<!-- /limit-groups -->';

/** The shell's own answers, which no table lists and `site` counts (api/http/app.ts shellLimit). */
const SHELL = '`GET /ready`, `GET /metrics`, every `OPTIONS` preflight, a path no route serves (404, 405)';

export function limitGroupsTable(): string {
  const config = loadConfig({});
  const groups = new Map<string, { quota: number; routes: string[] }>();
  const unmetered: string[] = [];
  for (const table of ROUTE_TABLES) {
    for (const route of table.routes) {
      const name = `${table.service} \`${route.method.toUpperCase()} ${route.path}\``;
      const limit = routeLimit(route);
      if (!limit) {
        unmetered.push(name);
        continue;
      }
      const group = quotaGroup(limit, config);
      const key = `${group.name}`;
      const entry = groups.get(key) ?? { quota: group.limit, routes: [] };
      entry.routes.push(name);
      groups.set(key, entry);
    }
  }
  const rows = [...groups].map(([name, { quota, routes }]) => `| \`${name}\` | ${quota} | ${[...routes, ...(name === 'site' ? [SHELL] : [])].join(', ')} |`);
  return [
    BEGIN,
    '| group (per client, a minute) | quota with the defaults | routes |',
    '|---|---|---|',
    ...rows,
    `| none (the contract exempts them) | | ${unmetered.join(', ')} |`,
    END,
  ].join('\n');
}

/** `page` with its generated section replaced by `table`. */
export function withLimitGroups(page: string, table = limitGroupsTable()): string {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/security.md has no section between ${BEGIN} and ${END}`);
  return `${page.slice(0, start)}${table}${page.slice(end + END.length)}`;
}
