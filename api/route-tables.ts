// Every service's route table, in the order of the document's tags: what the OpenAPI document
// describes (the skins service serves it for all three) and what the tests walk. Only the
// composition level may gather them: no service imports another's table (test/layers.test.ts).
import type { RouteTable } from './http/route-table.ts';
import { MEDIA_TABLE } from './media/routes.ts';
import { SEARCH_TABLE } from './search/routes.ts';
import { SKINS_TABLE } from './skins/routes.ts';

export const ROUTE_TABLES: readonly RouteTable[] = [SKINS_TABLE, MEDIA_TABLE, SEARCH_TABLE];
