// Function-level checks of the media indexer's parts: image and video size readers (against
// sharp as the reference), orientation, the random bag, tokens, password hashes, byte ranges.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { bufferSource } from '../api/media/byte-source.ts';
import { formatOf } from '../api/media/formats.ts';
import { parseRange } from '../api/media/file-response.ts';
import { imageSizeFromHeader } from '../api/media/image-size.ts';
import { mp4Dimensions } from '../api/media/mp4-boxes.ts';
import { orientationOf } from '../api/media/orientation.ts';
import { hashedPasswordVerifier, hashPassword, parsePasswordHash, plainPasswordVerifier } from '../api/media/password.ts';
import { RandomBag } from '../api/media/picker.ts';
import { probeFile } from '../api/media/probe.ts';
import { TokenSigner } from '../api/media/token.ts';
import { tinyMp4, tinyWebm } from '../api/media/tiny-video.ts';
import { webmDimensions } from '../api/media/webm-ebml.ts';
import { imageBytes, removeTempDirs, tempDir, type ImageFormat } from './helpers/media-library.ts';
import { ROOT } from './helpers/service.ts';

test.after.always(removeTempDirs);

test('image sizes match sharp after EXIF rotation, for every format and orientation', async (t) => {
  const dir = await tempDir('probe');
  const cases: Array<[ImageFormat, number | undefined]> = [];
  for (const format of ['png', 'jpg', 'webp', 'avif'] as const) for (let o = 1; o <= 8; o++) cases.push([format, o]);
  cases.push(['gif', undefined], ['avif', undefined], ['png', undefined], ['jpg', undefined], ['webp', undefined]);
  for (const [format, exifOrientation] of cases) {
    const bytes = await imageBytes(format, { width: 90, height: 60, exifOrientation });
    const file = path.join(dir, `${format}-${exifOrientation ?? 'none'}.${format}`);
    await fs.writeFile(file, bytes);
    const reference = (await sharp(bytes).metadata()).autoOrient;
    const probed = await probeFile(file, formatOf(file)!);
    t.deepEqual({ width: probed.width, height: probed.height }, reference, `${format} orientation ${exifOrientation}`);
    t.is(probed.bytes, bytes.length);
  }
});

test('the header reader answers PNG, GIF, WebP, AVIF and JPEG (with EXIF) without sharp', async (t) => {
  for (const format of ['png', 'gif', 'webp', 'jpg', 'avif'] as const) {
    t.deepEqual(imageSizeFromHeader(await imageBytes(format, { width: 33, height: 21 }), format), { width: 33, height: 21 }, format);
  }
  t.deepEqual(imageSizeFromHeader(await imageBytes('jpg', { width: 33, height: 21, exifOrientation: 8 }), 'jpg'), { width: 21, height: 33 });
  // Unsure cases go to sharp: EXIF in PNG or WebP, truncated headers.
  t.is(imageSizeFromHeader(await imageBytes('png', { width: 33, height: 21, exifOrientation: 6 }), 'png'), undefined);
  t.is(imageSizeFromHeader(await imageBytes('webp', { width: 33, height: 21, exifOrientation: 6 }), 'webp'), undefined);
  t.is(imageSizeFromHeader((await imageBytes('jpg', { width: 33, height: 21 })).subarray(0, 20), 'jpg'), undefined);
  t.is(imageSizeFromHeader((await imageBytes('avif', { width: 33, height: 21 })).subarray(0, 200), 'avif'), undefined);
});

test('MP4/MOV: track size, quarter turns, moov after mdat, audio track first', (t) => {
  const size = (options: Parameters<typeof tinyMp4>[0]) => mp4Dimensions(bufferSource(tinyMp4(options)));
  t.deepEqual(size({ width: 640, height: 360 }), { width: 640, height: 360 });
  t.deepEqual(size({ width: 1920, height: 1080, rotation: 90 }), { width: 1080, height: 1920 });
  t.deepEqual(size({ width: 1920, height: 1080, rotation: 270 }), { width: 1080, height: 1920 });
  t.deepEqual(size({ width: 1920, height: 1080, rotation: 180 }), { width: 1920, height: 1080 });
  t.deepEqual(size({ width: 320, height: 240, padBytes: 100_000, audioFirst: true }), { width: 320, height: 240 });
});

test('MP4: a 64-bit box size is followed', (t) => {
  const plain = tinyMp4({ width: 200, height: 500 });
  const ftypLength = plain.readUInt32BE(0);
  const mdat = Buffer.alloc(16 + 1000);
  mdat.writeUInt32BE(1, 0);
  mdat.write('mdat', 4, 'latin1');
  mdat.writeBigUInt64BE(BigInt(mdat.length), 8);
  const file = Buffer.concat([plain.subarray(0, ftypLength), mdat, plain.subarray(ftypLength)]);
  t.deepEqual(mp4Dimensions(bufferSource(file)), { width: 200, height: 500 });
});

test('MP4: garbage and truncated files give no size', (t) => {
  t.is(mp4Dimensions(bufferSource(Buffer.from('not a video at all, just text'))), undefined);
  const plain = tinyMp4({ width: 200, height: 500 });
  t.is(mp4Dimensions(bufferSource(plain.subarray(0, plain.length - 30))), undefined);
});

test('WebM: pixel size, with unknown-size segments and filler before Tracks', (t) => {
  const size = (options: Parameters<typeof tinyWebm>[0]) => webmDimensions(bufferSource(tinyWebm(options)));
  t.deepEqual(size({ width: 640, height: 360 }), { width: 640, height: 360 });
  t.deepEqual(size({ width: 360, height: 640, unknownSize: true }), { width: 360, height: 640 });
  t.deepEqual(size({ width: 4000, height: 3000, padBytes: 70_000 }), { width: 4000, height: 3000 });
  t.is(webmDimensions(bufferSource(Buffer.from('RIFF....WEBPVP8 '))), undefined);
});

test('WebM: DisplayWidth/DisplayHeight decide the displayed size (pixels, or a shape in other units)', (t) => {
  const size = (options: Parameters<typeof tinyWebm>[0]) => webmDimensions(bufferSource(tinyWebm(options)));
  // 640x360 pixels shown as 9:16 is portrait.
  t.deepEqual(size({ width: 640, height: 360, display: { width: 360, height: 640 } }), { width: 360, height: 640 });
  t.deepEqual(size({ width: 640, height: 360, display: { width: 9, height: 16, unit: 3 } }), { width: 203, height: 360 });
  // Unknown unit, or a zero: the pixel size stands.
  t.deepEqual(size({ width: 640, height: 360, display: { width: 9, height: 16, unit: 4 } }), { width: 640, height: 360 });
  t.deepEqual(size({ width: 640, height: 360, display: { width: 0, height: 16 } }), { width: 640, height: 360 });
});

test('orientation: wider is landscape, taller portrait, equal square', (t) => {
  t.is(orientationOf({ width: 2, height: 1 }), 'landscape');
  t.is(orientationOf({ width: 1, height: 2 }), 'portrait');
  t.is(orientationOf({ width: 5, height: 5 }), 'square');
});

test('random bag: add, delete and pick stay consistent and uniform', (t) => {
  const items = Array.from({ length: 1000 }, (_, n) => ({ n, slot: -1 }));
  const bag = new RandomBag<'slot', { n: number; slot: number }>('slot');
  for (const item of items) bag.add(item);
  bag.add(items[5]);
  for (let i = 0; i < 1000; i += 2) bag.delete(items[i]);
  bag.delete({ n: 123_456, slot: 3 });
  t.is(bag.size, 500);
  const seen = new Map<number, number>();
  for (let i = 0; i < 50_000; i++) {
    const { n } = bag.pick()!;
    t.true(n % 2 === 1);
    seen.set(n, (seen.get(n) ?? 0) + 1);
  }
  t.is(seen.size, 500);
  // 100 expected per item; a uniform pick stays well inside these bounds.
  t.true(Math.min(...seen.values()) > 40 && Math.max(...seen.values()) < 180);
  for (let i = 1; i < 1000; i += 2) bag.delete(items[i]);
  t.is(bag.pick(), undefined);
});

test('tokens: valid until expiry, refused when tampered or signed for another password', (t) => {
  const secret = Buffer.from('a-test-secret-of-some-length');
  const signer = new TokenSigner(secret, 'fingerprint-a');
  const now = Date.UTC(2030, 0, 1);
  const { token, expiresAt } = signer.mint(60, now);
  t.is(expiresAt, now / 1000 + 60);
  t.is(signer.check(token, now), 'valid');
  t.is(signer.check(token, now + 61_000), 'expired');
  t.is(signer.check(`${expiresAt + 1000}.${token.split('.')[1]}`, now), 'invalid');
  t.is(signer.check(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, now), 'invalid');
  t.is(new TokenSigner(secret, 'fingerprint-b').check(token, now), 'invalid');
  t.is(signer.check('../../etc/passwd', now), 'invalid');
});

test('passwords: plain and scrypt hashes verify, wrong ones do not, bad hashes are explained', async (t) => {
  t.true(await plainPasswordVerifier('s3cret').verify('s3cret'));
  t.false(await plainPasswordVerifier('s3cret').verify('s3cret '));
  const hash = await hashPassword('correct horse', { N: 1024, r: 8, p: 1 });
  t.regex(hash, /^scrypt:1024:8:1:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]{43}$/);
  const verifier = hashedPasswordVerifier(hash);
  t.true(await verifier.verify('correct horse'));
  t.false(await verifier.verify('correct horse battery'));
  t.not(verifier.fingerprint, hashedPasswordVerifier(await hashPassword('correct horse', { N: 1024, r: 8, p: 1 })).fingerprint);
  t.throws(() => parsePasswordHash('scrypt:1000:8:1:c2FsdHNhbHQ:a2V5a2V5a2V5a2V5a2V5a2V5'), { message: /power of 2/ });
  t.throws(() => parsePasswordHash('hunter2'), { message: /MEDIA_PASSWORD_HASH must look like/ });
});

test('the admin CLI hashes a piped password into a MEDIA_PASSWORD_HASH value that verifies', async (t) => {
  const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts/media-index.ts'), 'hash-password'], { input: 'piped secret\n', encoding: 'utf8' });
  t.is(run.status, 0, run.stderr);
  const hash = run.stdout.trim();
  t.regex(hash, /^scrypt:16384:8:1:/);
  t.true(await hashedPasswordVerifier(hash).verify('piped secret'));
});

test('byte ranges: open-ended, suffix, clamped, unsatisfiable and ignored forms', (t) => {
  t.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
  t.deepEqual(parseRange('bytes=90-', 100), { start: 90, end: 99 });
  t.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 });
  t.deepEqual(parseRange('bytes=50-5000', 100), { start: 50, end: 99 });
  t.is(parseRange('bytes=100-', 100), 'unsatisfiable');
  t.is(parseRange('bytes=-0', 100), 'unsatisfiable');
  t.is(parseRange('bytes=0-1,5-6', 100), undefined);
  t.is(parseRange('bytes=9-3', 100), undefined);
  t.is(parseRange('items=0-1', 100), undefined);
});
