// @koa/multer ships no types; this declares the small part the upload route uses.
declare module '@koa/multer' {
  import type { Middleware } from 'koa';
  interface Limits { fileSize?: number; files?: number; fields?: number; fieldSize?: number; parts?: number }
  interface Options { storage?: unknown; limits?: Limits }
  interface Instance { fields(fields: Array<{ name: string; maxCount?: number }>): Middleware }
  interface Multer {
    (options?: Options): Instance;
    memoryStorage(): unknown;
  }
  const multer: Multer;
  export default multer;
}
