import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SolanaChain } from '@svc/chain';
import { startServer, type RunningApi } from '../../apps/api/src/server';
import { freshDatabase, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { TcpProxy } from '../support/faults';
import { freePort } from '../support/ports';
import { until } from '../support/until';
import { call, type Reply } from '../support/http';

/** A Solana JSON-RPC that answers `getSlot` and counts the calls, or leaves every request unanswered while `hanging`. */
class CountingRpc {
  calls = 0;
  hanging = false;
  private readonly held = new Set<http.ServerResponse>();

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<CountingRpc> {
    let rpc!: CountingRpc;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        rpc.calls += 1;
        if (rpc.hanging) {
          rpc.held.add(res);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: 42 }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    rpc = new CountingRpc(server);
    return rpc;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/** How long one probe of the chain stands (libs/chain): within it, /readyz asks the RPC nothing. */
const PROBE_TTL_MS = 5_000;

/**
 * The API alone, its database reached through a proxy the test can stop (the shared PostgreSQL stays up), and
 * its chain an RPC the test controls: /readyz names the part that fails and never where it is, and reports the
 * chain from one cached probe that a silent RPC cannot hold up.
 */
describe('/readyz', () => {
  let db: FreshDatabase;
  let proxy: TcpProxy;
  let rpc: CountingRpc;
  let api: RunningApi;

  beforeAll(async () => {
    db = await freshDatabase('readyz');
    proxy = await TcpProxy.to(db.url);
    rpc = await CountingRpc.start();
    api = await startServer(
      testConfig({
        DATABASE_URL: proxy.via(db.url),
        DATA_DIR: tempDir('readyz'),
        SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
        SOLANA_RPC_URL: rpc.url,
        DATABASE_CONNECT_TIMEOUT_MS: '500',
      }),
    );
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await rpc?.close();
    await proxy?.stop();
    await db?.drop();
  });

  it('reports the chain from one probe per few seconds, and a chain that does not answer as unreachable within a bounded time, still ready', async () => {
    // Start-up asked the RPC once what chain it is (getVersion): only the probes from here on are counted.
    const askedAtStart = rpc.calls;
    const started = Date.now();
    const replies = [...(await Promise.all(Array.from({ length: 10 }, () => call(api.url, 'GET', '/readyz'))))];
    for (let i = 0; i < 10; i++) replies.push(await call(api.url, 'GET', '/readyz'));
    const elapsed = Date.now() - started;
    expect(replies.map((r) => [r.status, r.body.status, r.body.bus, r.body.chain])).toEqual(Array(20).fill([200, 'ready', 'ok', 'ok']));
    expect(rpc.calls - askedAtStart).toBeGreaterThanOrEqual(1);
    expect(rpc.calls - askedAtStart).toBeLessThanOrEqual(1 + Math.floor(elapsed / PROBE_TTL_MS));

    const reachable = api.services.chain;
    try {
      rpc.hanging = true;
      api.services.chain = new SolanaChain({ rpcUrl: rpc.url });
      const asked = Date.now();
      const silent = await call(api.url, 'GET', '/readyz');
      expect(Date.now() - asked).toBeLessThan(3_000);
      expect(silent.status).toBe(200);
      expect(silent.body).toMatchObject({ ok: true, status: 'ready', chain: 'unreachable' });

      await api.services.chain.close();
      const closedPort = await freePort();
      api.services.chain = new SolanaChain({ rpcUrl: `http://127.0.0.1:${closedPort}` });
      const refused = await call(api.url, 'GET', '/readyz');
      expect(refused.status).toBe(200);
      expect(refused.body).toMatchObject({ ok: true, status: 'ready', chain: 'unreachable' });
      expect(JSON.stringify(refused.body)).not.toContain(String(closedPort));
    } finally {
      await api.services.chain.close();
      api.services.chain = reachable;
      rpc.hanging = false;
    }
  });

  it('names the database, and nothing of where it is, while the database does not answer; ready again once it does', async () => {
    expect((await call(api.url, 'GET', '/readyz')).status).toBe(200);
    await proxy.stop();
    try {
      // The first may meet a pooled connection that was cut; the next ones a connection refused.
      const replies: Reply[] = [];
      for (let i = 0; i < 3; i++) replies.push(await call(api.url, 'GET', '/readyz'));
      for (const reply of replies) {
        expect(reply.status).toBe(503);
        expect(reply.body).toEqual({ ok: false, error: { code: 'not_ready', message: 'not ready: the database does not answer', part: 'database' } });
        const text = JSON.stringify(reply.body);
        for (const leak of ['127.0.0.1', 'localhost', String(proxy.port), '5432', 'ECONNREFUSED']) expect(text).not.toContain(leak);
        expect(text).not.toMatch(/\d/);
      }
    } finally {
      await proxy.start();
    }
    await until('/readyz to answer ready again', 15_000, async () => ((await call(api.url, 'GET', '/readyz')).status === 200 ? true : undefined), 100);
  });
});

describe('/readyz with the event store in a PostgreSQL of its own', () => {
  let db: FreshDatabase;
  let ledgerDb: FreshDatabase;
  let proxy: TcpProxy;
  let api: RunningApi;

  beforeAll(async () => {
    db = await freshDatabase('readyz_rm');
    ledgerDb = await freshDatabase('readyz_es');
    proxy = await TcpProxy.to(ledgerDb.url);
    api = await startServer(
      testConfig({
        DATABASE_URL: db.url,
        EVENTSTORE_URL: proxy.via(ledgerDb.url),
        DATA_DIR: tempDir('readyz-es'),
        SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
        DATABASE_CONNECT_TIMEOUT_MS: '500',
      }),
    );
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await proxy?.stop();
    await ledgerDb?.drop();
    await db?.drop();
  });

  it('names the event store, and nothing of where it is, while it does not answer', async () => {
    expect((await call(api.url, 'GET', '/readyz')).status).toBe(200);
    await proxy.stop();
    try {
      const reply = await call(api.url, 'GET', '/readyz');
      expect(reply.status).toBe(503);
      expect(reply.body).toEqual({ ok: false, error: { code: 'not_ready', message: 'not ready: the event store does not answer', part: 'event_store' } });
      expect(JSON.stringify(reply.body)).not.toMatch(/\d|127\.0\.0\.1|ECONNREFUSED/);
    } finally {
      await proxy.start();
    }
    await until('/readyz to answer ready again', 15_000, async () => ((await call(api.url, 'GET', '/readyz')).status === 200 ? true : undefined), 100);
  });
});
