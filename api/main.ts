// Entry point of `npm start`. Nothing else is loaded before the process has had the chance to
// replace itself by the same command with jemalloc and its V8 heap settings (relaunch.ts); then
// the service starts.
import { relaunch } from './relaunch.ts';

relaunch();
await import('./start.ts');
