// Requests that Node's parser refuses never reach Koa (a bad method, a broken header, one too
// large). They still get the service's error body and common headers, as a raw HTTP reply.
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { ApiError, type ErrorCode } from '../../shared/errors.ts';
import type { ErrorFormatter } from './errors.ts';

interface Shell { poweredBy: string; format: ErrorFormatter }

const shells = new WeakMap<Koa<never>, Shell>();

/** Called by createHttpApp: what a raw reply of this app looks like. */
export function registerShell(app: Koa<never>, shell: Shell): void {
  shells.set(app, shell);
}

function codeFor(error: NodeJS.ErrnoException): { status: number; reason: string; code: ErrorCode; detail: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW') return { status: 431, reason: 'Request Header Fields Too Large', code: 'bad_request', detail: 'malformed HTTP request' };
  // headersTimeout or requestTimeout (api/server.ts).
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, reason: 'Request Timeout', code: 'request_timeout', detail: 'the request did not arrive in time' };
  return { status: 400, reason: 'Bad Request', code: 'bad_request', detail: 'malformed HTTP request' };
}

/** A 'clientError' listener for the app's HTTP server. */
export function onClientError(app: Koa<never>): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    // A peer that went away (or a reply already under way) has nobody to read an answer.
    if (error.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const shell = shells.get(app);
    const { status, reason, code, detail } = codeFor(error);
    const body = JSON.stringify(shell ? shell.format(new ApiError(code, { detail })) : { code, success: false });
    const headers = [
      `HTTP/1.1 ${status} ${reason}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${randomUUID()}`,
      ...(shell ? [`X-Powered-By: ${shell.poweredBy}`] : []),
      'Access-Control-Allow-Origin: *',
      'Cache-Control: no-store',
      'Connection: close',
    ];
    socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
  };
}
