import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeHttp {
  url: string;
  /** Connections it has accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * An HTTP server on a free local port that hands each request, with its body read, to `answer` (none: it never
 * answers). To get a port nothing listens on, close one only after every other server of the test is bound:
 * a port freed first could be handed to the next one.
 */
export async function fakeHttp(answer?: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void): Promise<FakeHttp> {
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => answer?.(req, res, Buffer.concat(chunks).toString()));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
