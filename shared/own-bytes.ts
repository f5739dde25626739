// Bytes that are kept for long (cached images and textures) must not pin more memory than they
// are. Node hands out small buffers (under 4 KiB) as slices of a shared 8 KiB slab, and a view
// posted from a worker thread arrives with a copy of its whole backing store: a cached 1 KB PNG
// could keep 8 KB or a batch's worth alive, where the cache counts 1 KB.

/** `bytes` when it is its whole backing store, else an exact copy that is. */
export function ownBytes(bytes: Uint8Array): Buffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) {
    // A view of a whole store (one transferred from a worker, say) becomes a Buffer without a copy.
    return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, 0, bytes.byteLength);
  }
  const own = Buffer.allocUnsafeSlow(bytes.byteLength);
  own.set(bytes);
  return own;
}
