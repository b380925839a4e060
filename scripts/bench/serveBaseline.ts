/**
 * Child process: the baseline the ledger path is measured against. A plain express 5 route that does
 * one autocommit INSERT per request through a pg.Pool of the service's pool size.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { failStartup, serveUntilStopped } from './childSide';

/** The service's pool size (libs/readmodel openPostgres default). */
const POOL_SIZE = 10;

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is required');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_SIZE, application_name: 'bench-baseline' });
  pool.on('error', () => undefined);
  await pool.query('create table if not exists registrations (handle text primary key, payload jsonb not null)');

  const app = express();
  app.use(express.json());
  app.post('/api/v1/register', async (req, res) => {
    const body = (req.body ?? {}) as { handle?: unknown };
    if (typeof body.handle !== 'string') {
      res.status(400).json({ ok: false, error: 'handle is required' });
      return;
    }
    await pool.query('insert into registrations (handle, payload) values ($1, $2)', [body.handle, JSON.stringify(body)]);
    res.status(201).json({ ok: true, handle: body.handle });
  });

  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => resolve());
  });
  serveUntilStopped((server.address() as AddressInfo).port, async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await pool.end();
  });
}

main().catch(failStartup);
