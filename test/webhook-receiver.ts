import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the receiver answers a request: a status, or `hang` (never answers; the origin must time out). */
export type Reply = number | 'hang';

export type Received = { at: number; path: string; headers: IncomingMessage['headers']; body: string };

export type Receiver = {
  url: string;
  received: Received[];
  /** Ids of deliveries answered 2xx, one entry per 2xx. */
  succeeded: string[];
  stop: () => Promise<void>;
};

/** A webhook receiver on 127.0.0.1; `reply` decides each answer from what came before it. */
export async function startReceiver(
  reply: (request: Received, earlier: Received[]) => Reply = () => 200,
  delayMs = 0,
): Promise<Receiver> {
  const received: Received[] = [];
  const succeeded: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        at: Date.now(),
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      const answer = reply(request, [...received]);
      received.push(request);
      if (answer === 'hang') return;
      setTimeout(() => {
        if (answer >= 200 && answer < 300) succeeded.push(String(req.headers['x-depot-delivery']));
        res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
      }, delayMs);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    succeeded,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A loopback address where nothing listens: a port taken and let go again, so a connection is refused. */
export async function refusingUrl(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}
