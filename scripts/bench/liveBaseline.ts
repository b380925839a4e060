/**
 * Child process: the baselines of the realtime bench. A raw `ws` server that broadcasts each POST
 * /broadcast body to every socket in a plain loop, and a raw http server that holds GET /poll requests
 * and answers them all on POST /trigger. No framework, no database, no bus.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { failStartup, serveUntilStopped } from './childSide';

const held = new Set<http.ServerResponse>();
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url?.startsWith('/poll')) {
    held.add(res);
    res.once('close', () => held.delete(res));
    return;
  }
  if (req.method === 'GET' && req.url === '/held') return void res.end(JSON.stringify({ held: held.size }));
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    if (req.url === '/broadcast') {
      for (const client of wss.clients) client.send(body);
    } else if (req.url === '/trigger') {
      const frame = JSON.stringify({ ok: true, body });
      for (const waiting of [...held]) {
        held.delete(waiting);
        waiting.writeHead(200, { 'content-type': 'application/json' }).end(frame);
      }
    }
    res.end('{"ok":true}');
  });
});
server.keepAliveTimeout = 65_000;
const wss = new WebSocketServer({ server, path: '/ws', perMessageDeflate: false });
server.once('error', failStartup);
server.listen(0, '127.0.0.1', () => {
  serveUntilStopped((server.address() as AddressInfo).port, async () => {
    for (const client of wss.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
