/**
 * Child process: the ceiling of any express route on this machine, a no-op that parses the JSON
 * body and answers 201. Neither the baseline nor the ledger path can be faster than this.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { failStartup, serveUntilStopped } from './childSide';

const app = express();
app.use(express.json());
app.post('/api/v1/register', (req, res) => {
  res.status(201).json({ ok: true, handle: (req.body as { handle?: unknown }).handle });
});
const server = http.createServer(app);
server.once('error', failStartup);
server.listen(0, '127.0.0.1', () => {
  serveUntilStopped((server.address() as AddressInfo).port, () => new Promise<void>((resolve) => server.close(() => resolve())));
});
