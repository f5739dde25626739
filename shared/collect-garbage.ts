// A full garbage collection on demand, in whichever thread calls it, without starting Node with
// --expose-gc: the flag set at run time exposes `gc` to contexts made after it.
import v8 from 'node:v8';
import vm from 'node:vm';

type Gc = (options?: { type: 'major'; execution: 'sync'; flavor: 'regular' | 'last-resort' }) => void;
let gc: Gc | null = null;

/**
 * Collects this thread's garbage now and gives the freed pages back to the system: the
 * `last-resort` flavour is V8's collection under memory pressure (several passes, pooled pages
 * released), where a plain gc() leaves the heap at the size the load grew it to.
 */
export function collectGarbage(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as Gc;
  }
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}
