// Small node:http helpers shared by the fake's route modules: replies, bodies, a route table.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Whatever the route modules share (players, textures, keys...). Filled in by server.ts. */
export interface RouteContext<S> {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** Decoded captures of the route pattern. */
  params: string[];
  body: string;
  state: S;
  /** Leaves the request unanswered until the fake closes. */
  hang(): void;
}

export interface Route<S> {
  method: string | '*';
  pattern: RegExp;
  key: string;
  handler(ctx: RouteContext<S>): void | Promise<void>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** For 204: no body and, as HTTP requires, no Content-Length either. */
export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status);
  res.end();
}

export function sendBytes(res: ServerResponse, status: number, type: string, body: Buffer | string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location, 'content-length': 0 });
  res.end();
}

export class BodyTooLarge extends Error {}

/** The whole request body as UTF-8 text; refuses bodies over `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge(`body over ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** JSON.parse that answers undefined instead of throwing. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Form fields of an urlencoded or JSON body (Laravel accepts both). */
export function formFields(req: IncomingMessage, body: string): Record<string, string> {
  const type = req.headers['content-type'] ?? '';
  if (type.includes('application/json')) {
    const parsed = parseJson(body);
    if (typeof parsed !== 'object' || parsed === null) return {};
    return Object.fromEntries(Object.entries(parsed).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
  }
  return Object.fromEntries(new URLSearchParams(body));
}

export function findRoute<S>(routes: readonly Route<S>[], method: string, path: string): { route: Route<S>; params: string[] } | null {
  for (const route of routes) {
    if (route.method !== '*' && route.method !== method) continue;
    const match = route.pattern.exec(path);
    if (!match) continue;
    try {
      return { route, params: match.slice(1).map((p) => decodeURIComponent(p ?? '')) };
    } catch {
      return null; // malformed percent-encoding: treat as an unknown path
    }
  }
  return null;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
