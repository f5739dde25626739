// The shapes of an OpenAPI 3.1 document, as far as ours uses them. Types only, importing nothing of
// the project: the route tables, the description helpers and the builder all speak them, and
// none of those has to import another to do so (test/layers.test.ts).

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it). */
export type Schema = Record<string, unknown>;

export type Method = 'get' | 'head' | 'post' | 'patch' | 'delete';

/** `x-service`: which service the address is (skins, media, search). */
export interface Server { url: string; description: string; 'x-service': string }
export interface Parameter {
  name: string; in: 'path' | 'query' | 'header'; required: boolean; description: string; schema: Schema; example?: string | number; deprecated?: boolean;
}
export interface MediaType { schema: Schema; example?: unknown }
export interface RequestBody { required: boolean; description?: string; content: Record<string, MediaType> }
export interface Header { description: string; schema: Schema }
export interface Response {
  description: string;
  /** A shared header by reference (components.headers), or one described in place. */
  headers?: Record<string, { $ref: string } | Header>;
  content?: Record<string, MediaType>;
  /** For the answers in components.responses, which apply to any path: their status. */
  'x-status'?: number;
}
export type SecurityRequirement = Record<string, string[]>;
export interface SecurityScheme {
  type: 'apiKey' | 'http'; in?: 'header' | 'query' | 'cookie'; name?: string; scheme?: 'basic' | 'bearer'; description: string;
  /** What the curl examples write for the credential (a shell variable). */
  'x-curl'?: string;
}
export interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  deprecated?: boolean;
  parameters?: Parameter[];
  requestBody?: RequestBody;
  responses: Record<string, Response>;
  /** `[]` for public operations; `{}` in the list makes credentials optional. */
  security: SecurityRequirement[];
}
export type PathItem = { servers: Server[] } & Partial<Record<Method, Operation>>;
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  servers: Server[];
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<string, Schema>; responses: Record<string, Response>; headers: Record<string, Header>;
    securitySchemes: Record<string, SecurityScheme>;
  };
}
