/**
 * Child process: the baseline of the read benchmark. A plain express route that answers one indexed
 * SELECT of 30 top-level posts, newest first, through a pg.Pool of the service's pool size.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { failStartup, serveUntilStopped } from './childSide';

async function main(): Promise<void> {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, application_name: 'bench-select' });
  pool.on('error', () => undefined);
  const app = express();
  app.get('/select', async (_req, res) => {
    const { rows } = await pool.query('select * from rm.posts where parent_id is null order by seq desc limit 30');
    res.json({ ok: true, posts: rows });
  });
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  serveUntilStopped((server.address() as AddressInfo).port, async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await pool.end();
  });
}

main().catch(failStartup);
