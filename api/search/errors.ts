// The search API's error body, {status: "error", error: {code, message}}, in English (every code
// has its English message in shared/errors.ts). One shared code means something narrower here.
import type { ApiError, ErrorCode } from '../../shared/errors.ts';

const IN_THIS_API: Partial<Record<ErrorCode, string>> = {
  unauthorized: 'Admin token required (Authorization: Bearer <SEARCH_ADMIN_TOKEN>)',
};

export function formatSearchError(error: ApiError) {
  const base = IN_THIS_API[error.code];
  const message = base ? (error.detail ? `${base}: ${error.detail}` : base) : error.messageEn;
  return { status: 'error', error: { code: error.code, message } };
}
