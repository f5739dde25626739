// The CDP relay, a worker thread of its own (relay.ts starts it, one per process): it starts the
// farm's Chromium processes with --remote-debugging-pipe, so no browser listens on a DevTools
// port that any local process could drive, and owns their pipes. Each thread that drives a
// browser (the main thread, every page's worker) connects through a MessagePort and gets a
// browser session of its own (relay-transport.ts); a message from Chromium goes to the port whose
// session it carries, so a render's bytes pass this thread but never the main thread. This
// thread lives as long as the process: Chromium's parent-death signal follows the thread that
// spawned it (browser.ts, boundCommand).
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { parentPort, type MessagePort } from 'node:worker_threads';
import type { RelayReply, RelayRequest } from './relay.ts';
import { sessionOf, type ConnectReply, type ConnectRequest } from './relay-transport.ts';

/** How long Chromium has to answer its first call (puppeteer's launch timeout). */
const START_TIMEOUT_MS = 30_000;
/** A relay call (attaching a session, closing a page) not answered in this time fails. */
const CALL_TIMEOUT_MS = 30_000;
/** How long a browser asked to close (Browser.close) has to exit before it is killed. */
const CLOSE_GRACE_MS = 5000;
/** The end of Chromium's output kept for a failed start's message. */
const STDERR_KEPT = 2000;
/** The id of the relay's own calls on a client's session, above any id a client's puppeteer reaches; their answers go to no client. */
const OWN_ID = 2_147_483_000;
const OWN_ANSWER = `{"id":${OWN_ID},`;

/** A thread's connection: its browser session and every session opened under it (its pages). */
interface Client { port: MessagePort; session: string; sessions: Set<string> }

interface Call { resolve: (result: Record<string, unknown>) => void; reject: (error: Error) => void }

class PipedBrowser {
  readonly child: ChildProcess;
  /** Settles when the process has ended (or never started). */
  readonly exited: Promise<void>;
  private readonly pipe: Writable;
  /** Every session id to the client whose messages it carries. */
  private readonly owners = new Map<string, Client>();
  private readonly clients = new Set<Client>();
  private readonly calls = new Map<number, Call>();
  private lastId = 0;
  /** A message not yet ended by its NUL. */
  private partial: Buffer[] = [];
  private stderr = '';
  private started = false;
  /** Why the process ended, once it has. */
  private ended: string | null = null;

  constructor(executablePath: string, args: string[], env: NodeJS.ProcessEnv) {
    // fd 3 carries CDP to Chromium, fd 4 from it; a process group of its own, as puppeteer does,
    // so a kill reaches the whole tree and a terminal's Ctrl-C reaches only the service.
    this.child = spawn(executablePath, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], env, detached: true });
    this.pipe = this.child.stdio[3] as Writable;
    const output = this.child.stdio[4] as Readable;
    // A write to a browser that just died fails with EPIPE: its exit reports that.
    this.pipe.on('error', () => {});
    output.on('error', () => {});
    output.on('data', (chunk: Buffer) => this.read(chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (text: string) => { this.stderr = (this.stderr + text).slice(-STDERR_KEPT); });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve(this.end(`exited with ${signal ?? code}`)));
      this.child.once('error', (error) => resolve(this.end(error.message)));
    });
  }

  /** Resolves when Chromium answers; fails when it exits first or does not answer in time. */
  async start(): Promise<void> {
    await this.call('Browser.getVersion', {}, START_TIMEOUT_MS);
    this.started = true;
  }

  /** A call on the root session, which only this thread uses. */
  call(method: string, params: object = {}, timeoutMs = CALL_TIMEOUT_MS): Promise<Record<string, unknown>> {
    if (this.ended) return Promise.reject(this.endError());
    const id = ++this.lastId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.calls.delete(id);
        reject(new Error(`${method} not answered in ${timeoutMs} ms`));
      }, timeoutMs);
      this.calls.set(id, {
        resolve: (result) => { clearTimeout(timer); resolve(result); },
        reject: (error) => { clearTimeout(timer); reject(error); },
      });
      this.pipe.write(`${JSON.stringify({ id, method, params })}\0`);
    });
  }

  /** Gives `port` a browser session; the port's messages go to Chromium, the session's come back on it. */
  async attach(port: MessagePort): Promise<void> {
    let closed = false;
    port.once('close', () => { closed = true; });
    try {
      const { sessionId } = await this.call('Target.attachToBrowserTarget') as { sessionId: string };
      const client: Client = { port, session: sessionId, sessions: new Set() };
      this.own(sessionId, client);
      // A thread that went away while its session was made (a page worker ended) lets it go at once.
      if (closed) return this.detach(client);
      this.clients.add(client);
      port.on('message', (message: string) => this.pipe.write(`${message}\0`));
      port.once('close', () => this.detach(client));
      port.postMessage({ session: sessionId } satisfies ConnectReply);
    } catch (error) {
      port.postMessage({ error: (error as Error).message } satisfies ConnectReply);
      port.close();
    }
  }

  /** Closes over CDP, and kills what has not exited after a grace period (or had not started). */
  async close(): Promise<void> {
    if (this.started && !this.ended) {
      this.call('Browser.close').catch(() => {});
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.exited, new Promise((resolve) => { timer = setTimeout(resolve, CLOSE_GRACE_MS); })]);
      clearTimeout(timer);
    }
    this.kill();
    await this.exited;
  }

  kill(): void {
    if (this.ended || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      this.child.kill('SIGKILL');
    }
  }

  private own(session: string, client: Client): void {
    this.owners.set(session, client);
    client.sessions.add(session);
  }

  private detach(client: Client): void {
    this.clients.delete(client);
    for (const session of client.sessions) this.owners.delete(session);
    // Its pages' sessions go with it.
    if (!this.ended) this.call('Target.detachFromTarget', { sessionId: client.session }).catch(() => {});
  }

  /** Splits Chromium's output into messages (each ends with a NUL). */
  private read(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(0); end !== -1; end = chunk.indexOf(0, start)) {
      const tail = chunk.subarray(start, end);
      this.route(this.partial.length === 0 ? tail.toString() : Buffer.concat([...this.partial, tail]).toString());
      this.partial = [];
      start = end + 1;
    }
    if (start < chunk.length) this.partial.push(chunk.subarray(start));
  }

  /**
   * Hands a message to the client of its session; a page attached under a client's session
   * becomes that client's (Chromium writes an event's method first). Messages of sessions let go
   * are dropped, and answers to the relay's own calls on a client's session; the root's are this
   * thread's own.
   */
  private route(message: string): void {
    const session = sessionOf(message);
    if (session === null) return this.answer(message);
    if (message.startsWith(OWN_ANSWER)) return;
    const client = this.owners.get(session);
    if (!client) return;
    if (message.startsWith('{"method":"Target.attachedToTarget"')) {
      const { sessionId, waitingForDebugger } = (JSON.parse(message) as { params: { sessionId: string; waitingForDebugger: boolean } }).params;
      this.own(sessionId, client);
      // Every connection (puppeteer's auto-attach) holds each new target of its browser paused
      // until it says run, and a page thread idles frozen (Piscina's Atomics.wait): a page one
      // thread opened waited for every idle thread beside it, so after an idle trim or a crash its
      // navigation hung until the job timed out, for good (issue #38). The relay lets it run at
      // once; the connection's own call later changes nothing (its pages load only after it has
      // set them up).
      if (waitingForDebugger) this.pipe.write(`{"id":${OWN_ID},"method":"Runtime.runIfWaitingForDebugger","sessionId":"${sessionId}"}\0`);
    } else if (message.startsWith('{"method":"Target.detachedFromTarget"')) {
      const gone = (JSON.parse(message) as { params: { sessionId: string } }).params.sessionId;
      this.owners.delete(gone);
      client.sessions.delete(gone);
    }
    client.port.postMessage(message);
  }

  private answer(message: string): void {
    const reply = JSON.parse(message) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
    const call = reply.id === undefined ? undefined : this.calls.get(reply.id);
    if (!call) return;
    this.calls.delete(reply.id!);
    if (reply.error) call.reject(new Error(reply.error.message));
    else call.resolve(reply.result ?? {});
  }

  private endError(): Error {
    const output = this.stderr.trim();
    return new Error(this.started ? `the browser ${this.ended}` : `Failed to launch the browser process: ${this.ended}${output ? `\n${output}` : ''}`);
  }

  /** The process is gone: its calls fail and every client's port closes (puppeteer reads a disconnect). */
  private end(reason: string): void {
    if (this.ended) return;
    this.ended = reason;
    for (const call of this.calls.values()) call.reject(this.endError());
    this.calls.clear();
    for (const client of this.clients) client.port.close();
    this.clients.clear();
    this.owners.clear();
  }
}

const browsers = new Map<string, PipedBrowser>();
const port = parentPort!;
const reply = (message: RelayReply) => port.postMessage(message);

async function launch(key: string, executablePath: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ pid: number }> {
  const browser = new PipedBrowser(executablePath, args, env);
  browsers.set(key, browser);
  void browser.exited.then(() => {
    if (browsers.get(key) === browser) browsers.delete(key);
  });
  try {
    await browser.start();
    return { pid: browser.child.pid! };
  } catch (error) {
    browser.kill();
    await browser.exited;
    throw error;
  }
}

port.on('message', (request: RelayRequest | ConnectRequest) => {
  if ('connect' in request) {
    const browser = browsers.get(request.connect);
    if (browser) void browser.attach(request.port);
    else {
      request.port.postMessage({ error: `browser ${request.connect} is not running` } satisfies ConnectReply);
      request.port.close();
    }
    return;
  }
  const work = request.op === 'launch'
    ? launch(request.browser, request.executablePath, request.args, request.env)
    : browsers.get(request.browser)?.close() ?? Promise.resolve();
  work.then(
    (result) => reply({ re: request.re, pid: result?.pid }),
    (error: Error) => reply({ re: request.re, error: error.message }),
  );
});
