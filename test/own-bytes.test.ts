// Cached bytes own their backing store: a small Buffer from Node's shared slab, or a view posted
// from a worker thread, would otherwise keep far more memory alive than the cache counts.
import test from 'ava';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { ownBytes } from '../shared/own-bytes.ts';
import { encodePng, FILTER } from '../renderer/png-encode.ts';

test('a slice of a shared slab is copied to a store of its own size; a buffer that owns its store is kept', (t) => {
  const pooled = Buffer.from('a small string on the shared 8 KiB slab');
  t.true(pooled.buffer.byteLength > pooled.byteLength, 'Node pooled it');
  const own = ownBytes(pooled);
  t.is(own.buffer.byteLength, pooled.byteLength);
  t.true(own.equals(pooled));
  const whole = Buffer.allocUnsafeSlow(100).fill(7);
  t.is(ownBytes(whole), whole);
});

test('a view that arrives from another thread brings its whole store; ownBytes keeps only the view', (t) => {
  const { port1, port2 } = new MessageChannel();
  const batch = Buffer.alloc(64 * 1024, 1);
  port1.postMessage(batch.subarray(1000, 2000));
  const arrived = receiveMessageOnPort(port2)!.message as Uint8Array;
  port1.close();
  t.is(arrived.buffer.byteLength, 64 * 1024, 'structured clone copies the whole backing store');
  t.is(ownBytes(arrived).buffer.byteLength, 1000);
});

test('avatar PNGs (a few hundred bytes) own their bytes', (t) => {
  const rows = Buffer.alloc(9 * (1 + 9 * 4));
  for (let y = 0; y < 9; y += 1) rows[y * (1 + 9 * 4)] = FILTER.none;
  const png = encodePng(rows, 9, 9);
  t.true(png.byteLength < 4096);
  t.is(png.buffer.byteLength, png.byteLength);
});

test('a whole store transferred from another thread becomes a Buffer over that same store, not a copy', (t) => {
  const { port1, port2 } = new MessageChannel();
  const png = Buffer.allocUnsafeSlow(20_000).fill(3);
  port1.postMessage(png, [png.buffer]);
  const arrived = receiveMessageOnPort(port2)!.message as Uint8Array;
  port1.close();
  t.false(Buffer.isBuffer(arrived), 'it arrives as a plain Uint8Array');
  const own = ownBytes(arrived);
  t.true(Buffer.isBuffer(own));
  t.is(own.buffer, arrived.buffer, 'the same store');
  t.is(own.byteLength, 20_000);
  t.is(own[19_999], 3);
});
