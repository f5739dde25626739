// Placeholder until the search service lands (being built now); answers 501 on every path.
import { createHttpApp } from '../http/app.ts';
import { errorEnvelope } from '../http/envelope.ts';
import { ApiError } from '../../shared/errors.ts';
import type { Service, SharedDeps } from '../service.ts';

export async function createSearchService(deps: SharedDeps): Promise<Service> {
  const app = createHttpApp({ service: 'search', version: '1.0.0', log: deps.log, trustProxy: deps.config.trustProxy, formatError: errorEnvelope });
  app.use(() => { throw new ApiError('not_implemented'); });
  return { app };
}
