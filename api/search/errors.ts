// The search API's error body, {status: "error", error: {code, message}}. The search codes carry
// English messages already; the generic shared codes get English ones here for this API.
import type { ApiError, ErrorCode } from '../../shared/errors.ts';

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  bad_request: 'Invalid request',
  unauthorized: 'Admin token required (Authorization: Bearer <SEARCH_ADMIN_TOKEN>)',
  not_found: 'Not found',
  route_not_found: 'No such route',
  method_not_allowed: 'Method not allowed',
  payload_too_large: 'Request body too large',
  rate_limited: 'Too many failed attempts; try again later',
  internal_error: 'Internal error',
};

export function formatSearchError(error: ApiError) {
  const base = MESSAGES[error.code];
  const message = base ? (error.detail ? `${base}: ${error.detail}` : base) : error.message;
  return { status: 'error', error: { code: error.code, message } };
}
