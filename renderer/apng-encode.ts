// An APNG writer from frames that are PNGs already (the farm's, one per turntable frame): their
// compressed image data is moved into the animation as it is, so building one costs chunk copies
// and CRCs, not a decode and a deflate per frame. libvips (sharp) cannot write APNG.
// Layout (the APNG spec): IHDR, acTL, then per frame fcTL and its data (IDAT for the first frame,
// fdAT with a sequence number for the others), IEND; fcTL and fdAT share one sequence.
import { pngChunks } from './png-decode.ts';
import { chunk, SIGNATURE } from './png-encode.ts';

interface Frame { header: Buffer; data: Buffer[] }

/** A PNG's header and image data chunks; only the kinds a frame may carry as it is (no palette). */
function readFrame(png: Buffer): Frame {
  if (png.length < SIGNATURE.length || !png.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('an APNG frame is not a PNG');
  let header: Buffer | null = null;
  const data: Buffer[] = [];
  for (const { type, body } of pngChunks(png)) {
    if (type === 'IHDR') header = body;
    else if (type === 'IDAT') data.push(body);
    else if (type === 'IEND') break;
    // A critical chunk (PLTE) would have to be the animation's too: not what the farm draws.
    else if (type.charCodeAt(0) < 0x61) throw new Error(`an APNG frame has a ${type} chunk`);
  }
  if (!header || data.length === 0) throw new Error('an APNG frame has no header or no image data');
  return { header, data };
}

/**
 * An animated PNG of `frames` (PNGs of one size and colour type), each shown `delayNum`/`delayDen`
 * seconds, looping forever. Every frame replaces the whole canvas (dispose none, blend source),
 * so transparent pixels stay transparent in every frame.
 */
export function encodeApng(frames: Buffer[], delayNum: number, delayDen: number): Buffer {
  const read = frames.map(readFrame);
  const header = read[0].header;
  if (read.some((f) => !f.header.equals(header))) throw new Error('APNG frames differ in size or colour type');
  const control = Buffer.alloc(8);
  control.writeUInt32BE(frames.length, 0); // num_frames; num_plays 0: forever
  const chunks = [SIGNATURE, chunk('IHDR', header), chunk('acTL', control)];
  let sequence = 0;
  read.forEach((frame, i) => {
    const fc = Buffer.alloc(26);
    fc.writeUInt32BE(sequence++, 0);
    header.copy(fc, 4, 0, 8); // width, height; x and y offsets 0
    fc.writeUInt16BE(delayNum, 20);
    fc.writeUInt16BE(delayDen, 22);
    // dispose_op 0 (none), blend_op 0 (source): the frame replaces the canvas, alpha included.
    chunks.push(chunk('fcTL', fc));
    for (const data of frame.data) {
      if (i === 0) chunks.push(chunk('IDAT', data));
      else {
        const fd = Buffer.alloc(4 + data.length);
        fd.writeUInt32BE(sequence++, 0);
        data.copy(fd, 4);
        chunks.push(chunk('fdAT', fd));
      }
    }
  });
  chunks.push(chunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(chunks);
}
