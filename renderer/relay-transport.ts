// A puppeteer connection to one of the CDP relay's browsers (cdp-relay.ts), from any thread. The
// thread asks the relay for a connection by sending it one end of a MessageChannel (a page
// worker through the main thread, which forwards it); the relay answers on that port with a
// browser session of the thread's own (Target.attachToBrowserTarget) and from then on carries
// the thread's CDP messages between the port and Chromium's pipe. To puppeteer the session looks
// like the browser's root connection: messages for the root get the session's id on the way out
// and lose it on the way in.
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import puppeteer, { type Browser, type ConnectionTransport } from 'puppeteer-core';

/** A request for a connection to the browser `connect` (LaunchedBrowser.key); `port` goes to the relay. */
export interface ConnectRequest { connect: string; port: MessagePort }
/** The relay's first message on a port: the browser session that port speaks for, or why there is none. */
export type ConnectReply = { session: string } | { error: string };

const SESSION_KEY = ',"sessionId":"';

/**
 * The session a CDP message is for, or null for the browser's root. Chromium and puppeteer both
 * put `sessionId` last, so it is read from the end of the text without parsing the message (a
 * batch's images are hundreds of kB): in valid JSON a text ending `,"sessionId":"…"}` with no
 * quote inside the id has that key as its top-level last member.
 */
export function sessionOf(message: string): string | null {
  if (!message.endsWith('"}')) return null;
  const at = message.lastIndexOf(SESSION_KEY, message.length - 2);
  if (at < 0) return null;
  const session = message.slice(at + SESSION_KEY.length, -2);
  return session.includes('"') ? null : session;
}

/** puppeteer's transport over a relay port, the browser session standing in for the root. */
class RelayTransport implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  private readonly port: MessagePort;
  /** How a message for this session ends. */
  private readonly ownEnd: string;

  constructor(port: MessagePort, session: string) {
    this.port = port;
    this.ownEnd = `${SESSION_KEY}${session}"}`;
    port.on('message', (message: string) => this.onmessage?.(message.endsWith(this.ownEnd) ? `${message.slice(0, -this.ownEnd.length)}}` : message));
    port.once('close', () => this.onclose?.());
  }

  send(message: string): void {
    this.port.postMessage(sessionOf(message) === null ? `${message.slice(0, -1)}${this.ownEnd}` : message);
  }

  close(): void {
    this.port.close();
  }
}

/**
 * Connects puppeteer to the relay's browser `key`; `ask` delivers the request to the relay
 * (relay().connect on the main thread, parentPort.postMessage from a page worker). Fails when the
 * browser is gone or the relay does not answer.
 */
export async function connectBrowser(key: string, ask: (request: ConnectRequest) => void, protocolTimeout: number): Promise<Browser> {
  const { port1, port2 } = new MessageChannel();
  try {
    const reply = await new Promise<ConnectReply>((resolve, reject) => {
      port1.once('message', resolve);
      port1.once('close', () => reject(new Error(`the connection to browser ${key} closed before it was made`)));
      ask({ connect: key, port: port2 });
    });
    if ('error' in reply) throw new Error(reply.error);
    return await puppeteer.connect({ transport: new RelayTransport(port1, reply.session), defaultViewport: null, protocolTimeout });
  } catch (error) {
    port1.close();
    throw error;
  }
}
