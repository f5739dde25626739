// The ceiling beside every HTTP figure: a bare node:http server that sends, for any path, the
// bytes the service sent for a sample request of the same scenario (status, the same headers
// but those Node writes itself, the same body), so the difference is the service's own work.
// Like the service, it echoes a request's X-Request-Id (the load script times answers by it).
import http from 'node:http';
import { once } from 'node:events';

export interface Reply { status: number; headers: Array<[string, string]>; body: Buffer }

/** Headers Node's server writes on its own (or that describe this connection only). */
const OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/** One answer of the service as wrk gets it (node:http, no Accept-Encoding, no decoding), to replay. */
export async function captureReply(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(url, { headers }, resolve).on('error', reject));
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
  return { status: res.statusCode!, headers: pairs.filter(([name]) => !OWN.has(name.toLowerCase())), body: Buffer.concat(chunks) };
}

export async function startBareServer(reply: Reply): Promise<{ url: string; close(): Promise<void> }> {
  const headers = [...reply.headers, ['content-length', String(reply.body.length)]].flat();
  const idAt = headers.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'x-request-id') + 1;
  const server = http.createServer((req, res) => {
    const id = req.headers['x-request-id'];
    if (idAt > 0 && typeof id === 'string') {
      const echoed = [...headers];
      echoed[idAt] = id;
      res.writeHead(reply.status, echoed);
    } else {
      res.writeHead(reply.status, headers);
    }
    res.end(reply.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
