// Entry point of `npm start`. Nothing else is loaded before the process has had the chance to
// replace itself by the same command on jemalloc (shared/allocator.ts); then the service starts.
import { runOnJemalloc } from '../shared/allocator.ts';

runOnJemalloc();
await import('./start.ts');
