// A worker thread of `search-import`: types batches (batch.ts) and hands the COPY text back
// moved, not copied (Piscina's transferable protocol).
import { Piscina, transferableSymbol, valueSymbol } from 'piscina';
import { typeBatch, type Batch } from './batch.ts';

export default function run(batch: Batch) {
  const typed = typeBatch(batch);
  return Piscina.move({
    get [transferableSymbol]() { return [typed.rows.buffer, typed.values.buffer, typed.terms.buffer]; },
    get [valueSymbol]() { return typed; },
  });
}
