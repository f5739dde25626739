// Descriptions of the paths every service answers (/, /health, /ready, /metrics). Each service's
// table has its own entry for / and /health with its own handler and names one of these
// descriptions, which the document lists once for all of them; /ready and /metrics are answered
// by the app shell (api/readiness.ts, api/metrics.ts).
import { SERVICE_NAMES } from '../config.ts';
import type { OperationDoc, RouteSpec } from '../http/route-table.ts';
import type { SecurityScheme } from './openapi-types.ts';
import { headers, HTML, json, redirect, octets, requires } from './fragments.ts';
import { ref } from './schemas.ts';

export const MEDIA_PRIVATE = ['mediaBasic', 'mediaPassword', 'mediaToken'];

export const ROOT_DOC: OperationDoc = {
  services: ['media', 'skins', 'search'],
  summary: 'A random file of a category (media), or the service\'s page for people',
  description: 'Media: one selector per request. Without format the file itself is answered (Cache-Control: no-store, Content-Location: its permanent address); '
    + 'with redirect=1 a 302 to that address; without any selector the HTML landing page lists the public categories. '
    + 'Skins: the landing page. Search: the front page for a browser; a client asking for JSON gets 404 `route_not_found`.',
  ok: {
    description: 'the file, its JSON description (format=json; with count, a list), its address (format=text; with count, one a line), or an HTML page',
    content: {
      'application/json': { schema: { oneOf: [ref('MediaItem'), ref('MediaItems')] } }, 'text/plain': { schema: { type: 'string' } },
      'image/*': { schema: { type: 'string', contentMediaType: 'image/*' } }, 'video/*': { schema: { type: 'string', contentMediaType: 'video/*' } }, 'text/html': HTML,
    },
  },
  more: {
    302: redirect('media, redirect=1: to the file\'s permanent address /f/<id>.<ext>'),
    206: octets('media, a Range request: the bytes of the file this client was last given for this selection (a player seeking)', { headers: headers('Content-Range') }),
    416: { description: 'media, a Range outside that file (no body)', headers: headers('Content-Range') },
  },
  errors: ['bad_request', 'password_required', 'wrong_password', 'category_not_found', 'empty_category', 'route_not_found', 'internal_error'],
  security: requires('', ...MEDIA_PRIVATE),
};

export const HEALTH_DOC: OperationDoc = {
  services: [...SERVICE_NAMES],
  summary: 'Health and version', description: 'Each service answers its own shape; no credentials needed.',
  ok: json('service state', { oneOf: [ref('SkinsHealth'), ref('MediaHealth'), ref('SearchHealth')] }),
};

/** The security schemes the app shell's routes name. */
export const SHELL_SECURITY: Record<string, SecurityScheme> = {
  metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when set' },
};

/** Routes the app shell answers on every service, before any table. */
export const SHELL_ROUTES: readonly RouteSpec[] = [{
  method: 'get', path: '/ready',
  doc: {
    services: [...SERVICE_NAMES],
    summary: 'Readiness: whether this instance should get traffic, and each dependency\'s state',
    description: 'Poll this from a load balancer; poll /health for liveness (restart). 503 `overloaded` only when something of this instance itself '
      + 'cannot serve (starting, the event loop past MAX_EVENT_LOOP_LAG_MS, no render page alive); Redis or an upstream failing, which every instance '
      + 'shares, answers 200 `degraded` with the check that says so.',
    ok: json('ready or degraded, with every check', ref('Readiness')),
  },
}, {
  method: 'get', path: '/metrics',
  doc: {
    services: [...SERVICE_NAMES],
    summary: 'Prometheus metrics', description: 'The same registry on every service port. With METRICS_TOKEN set a bearer token is required; without it only requests made on the same machine are answered, unless METRICS_PUBLIC=true.',
    ok: { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } },
    more: {
      401: { description: 'METRICS_TOKEN is set and the request does not carry it', content: { 'text/plain': { schema: { type: 'string' } } } },
      403: { description: 'no METRICS_TOKEN, METRICS_PUBLIC is off and the request came from another machine (or through a proxy)', content: { 'text/plain': { schema: { type: 'string' } } } },
    },
    security: requires('', 'metricsToken'),
  },
}];
