// Request bodies and headers are bounded, through the running skins service on raw sockets (a
// client that stops half-way is what is tested, which fetch cannot be): a trickled upload is cut
// at its deadline with an answer, a Content-Length over the limit is refused before the body is
// sent, one client may be sending only a few bodies at once and all bodies together only so many
// bytes, and slow headers are answered by the headers timeout. And an HD upload is decoded off
// the event loop.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import test from 'ava';
import sharp from 'sharp';
import { loadConfig } from '../api/config.ts';
import { RenderError } from '../renderer/errors.ts';
import { normalizeCape, normalizeSkin, readCape, readSkin } from '../renderer/skin-normalize.ts';
import { drawCape, drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { ROOT, startApp, type RunningApp } from './helpers/service.ts';

const BOUNDARY = 'skinfarm-bounded';

/** A multipart form of a skin and a cape of `size` bytes each (2 MiB is the most a file may be), and its head. */
function form(size: number): { head: string; body: Buffer } {
  const part = (name: string) => [
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.png"\r\nContent-Type: image/png\r\n\r\n`),
    Buffer.alloc(size, 7),
    Buffer.from('\r\n'),
  ];
  const body = Buffer.concat([...part('file'), ...part('cape'), Buffer.from(`--${BOUNDARY}--\r\n`)]);
  return { head: `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}`, body };
}

interface Answer { status: number; headers: Record<string, string>; json: Record<string, unknown> }

/** An open connection that sends what it is given and reads the final answer (after any 100 Continue). */
class RawClient {
  private readonly socket: net.Socket;
  private received = Buffer.alloc(0);
  private readonly closed: Promise<void>;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => { this.received = Buffer.concat([this.received, chunk]); });
    this.closed = new Promise((resolve) => this.socket.on('close', () => resolve()));
    this.socket.on('error', () => {});
  }

  send(data: string | Buffer): this {
    this.socket.write(data);
    return this;
  }

  /** Resolves once the service has said 100 Continue: the request is in a handler. */
  async continued(): Promise<void> {
    while (!this.received.toString('latin1').startsWith('HTTP/1.1 100')) await new Promise((resolve) => this.socket.once('data', resolve));
  }

  /** The answer, once the service has closed the connection (it closes after any body it did not read). */
  async answer(): Promise<Answer> {
    await this.closed;
    const text = this.received.toString('utf8').replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
    const [head, body] = text.split('\r\n\r\n');
    const [status, ...lines] = head.split('\r\n');
    const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    return { status: Number(status.split(' ')[1]), headers, json: JSON.parse(body) };
  }

  close(): void {
    this.socket.destroy();
  }
}

function isEnvelope(t: import('ava').ExecutionContext, answer: Answer, status: number, code: string): void {
  t.is(answer.status, status, JSON.stringify(answer.json));
  t.like(answer.json, { code, success: false, data: null });
  t.is(typeof answer.json.message, 'string');
  t.is(typeof answer.json.timestamp, 'number');
}

// Short deadlines, so the tests take seconds: the defaults are checked against the docs below.
let quick: RunningApp;
// Long deadlines and a trusted proxy: bodies held on purpose stay held, clients told apart by X-Forwarded-For.
let capped: RunningApp;
test.before(async () => {
  [quick, capped] = await Promise.all([
    startApp({ SERVICES: 'skins', BODY_TIMEOUT_SECONDS: '1', HEADERS_TIMEOUT_SECONDS: '1' }),
    startApp({ SERVICES: 'skins', TRUST_PROXY: '1', UPLOADS_PER_CLIENT: '2', BODY_BYTES_IN_FLIGHT: String(1024 * 1024) }),
  ]);
});
test.after.always(async () => {
  await Promise.all([quick?.stop(), capped?.stop()]);
});

const port = (app: RunningApp) => Number(new URL(app.urls.skins).port);
const upload = (head: string, more = '') => `POST /v1/render HTTP/1.1\r\nHost: skins\r\n${more}${head}\r\n\r\n`;

test('an upload trickled to 1,000 bytes short is cut at BODY_TIMEOUT_SECONDS with a 408 envelope and a closed connection', async (t) => {
  t.timeout(30_000);
  const { head, body } = form(2_000_000);
  const client = new RawClient(port(quick)).send(upload(head)).send(body.subarray(0, body.length - 1000));
  isEnvelope(t, await client.answer(), 408, 'request_timeout');
});

test('the body and headers deadlines default to what docs/configuration.md says', (t) => {
  const { requests } = loadConfig({});
  t.is(requests.bodies.timeoutMs, 30_000);
  t.is(requests.headersTimeoutMs, 20_000);
  const page = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
  t.regex(page, /\| `BODY_TIMEOUT_SECONDS` \| `30` \|/);
  t.regex(page, /\| `HEADERS_TIMEOUT_SECONDS` \| `20` \|/);
});

test('a Content-Length over the limit is refused with 413 before any of the body is sent', async (t) => {
  t.timeout(30_000);
  const tooLong = `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 50000000`;
  isEnvelope(t, await new RawClient(port(quick)).send(upload(tooLong)).answer(), 413, 'payload_too_large');
  const json = 'POST /v1/batch HTTP/1.1\r\nHost: skins\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n';
  isEnvelope(t, await new RawClient(port(quick)).send(json).answer(), 413, 'payload_too_large');
});

test('slow headers are answered 408 by HEADERS_TIMEOUT_SECONDS', async (t) => {
  t.timeout(30_000);
  const answer = await new RawClient(port(quick)).send('GET /v1/status HTTP/1.1\r\nHost: skins\r\nX-Slow: ').answer();
  isEnvelope(t, answer, 408, 'request_timeout');
  t.is(answer.headers.connection, 'close');
});

test.serial('one client may be sending UPLOADS_PER_CLIENT bodies at once; another client is not held up', async (t) => {
  t.timeout(30_000);
  const { head } = form(5_000);
  const from = (ip: string) => `X-Forwarded-For: ${ip}\r\n`;
  const held = [new RawClient(port(capped)), new RawClient(port(capped))];
  t.teardown(() => held.forEach((c) => c.close()));
  for (const client of held) client.send(upload(head, `Expect: 100-continue\r\n${from('203.0.113.7')}`));
  await Promise.all(held.map((c) => c.continued()));
  const third = await new RawClient(port(capped)).send(upload(head, from('203.0.113.7'))).answer();
  isEnvelope(t, third, 429, 'rate_limited');
  t.is(third.headers['retry-after'], '1');
  const other = new RawClient(port(capped)).send(upload(head, `Expect: 100-continue\r\n${from('203.0.113.8')}`));
  held.push(other);
  await other.continued();
  t.pass('another client\'s upload was read');
});

test.serial('bodies being read hold at most BODY_BYTES_IN_FLIGHT together: past it 503 with Retry-After', async (t) => {
  t.timeout(30_000);
  const big = form(500_000);
  const holder = new RawClient(port(capped)).send(upload(big.head, 'Expect: 100-continue\r\nX-Forwarded-For: 203.0.113.20\r\n'));
  t.teardown(() => holder.close());
  await holder.continued();
  const next = await new RawClient(port(capped)).send(upload(form(50_000).head, 'X-Forwarded-For: 203.0.113.21\r\n')).answer();
  isEnvelope(t, next, 503, 'overloaded');
  t.is(next.headers['retry-after'], '1');
});

/** Turns of the event loop that ran while `work` was not settled (none when it runs in one piece on this thread). */
async function turnsDuring(work: Promise<unknown>): Promise<number> {
  let settled = false;
  let turns = 0;
  const done = work.finally(() => { settled = true; });
  const spin = async () => {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      if (settled) return;
      turns += 1;
    }
  };
  await Promise.all([done.catch(() => {}), spin()]);
  return turns;
}

test('a 1024 px skin and cape are decoded while the event loop turns, to the pixels decoding here gives', async (t) => {
  const skin = await drawSkin({ scale: 16, seed: 5 });
  const cape = await sharp(await drawCape({ seed: 5 })).resize(1024, 512, { kernel: 'nearest' }).png().toBuffer();
  let decoded: [Awaited<ReturnType<typeof normalizeSkin>>, Awaited<ReturnType<typeof normalizeCape>>] | undefined;
  const turns = await turnsDuring(Promise.all([normalizeSkin(skin), normalizeCape(cape)]).then((both) => { decoded = both; }));
  t.true(turns > 0, 'the event loop ran while the textures were decoded');
  const [here, capeHere] = await Promise.all([readSkin(skin), readCape(cape)]);
  t.is(decoded![0].hash, here.hash);
  t.true(decoded![0].data.equals(here.data));
  t.like(decoded![0], { size: 1024, legacy: false, slimGuess: here.slimGuess });
  t.true(decoded![1].data.equals(capeHere.data));
  // A file refused on a thread is refused as here: invalid_texture, in both languages.
  const odd = await sharp({ create: { width: 1024, height: 1000, channels: 4, background: '#000' } }).png().toBuffer();
  const error = await t.throwsAsync(normalizeSkin(odd), { instanceOf: RenderError, message: /1024x1000/ });
  t.is(error?.kind, 'invalid_texture');
  t.regex(error?.zh ?? '', /1024x1000/);
});
