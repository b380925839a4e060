import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { SolanaChain } from '@svc/chain';
import { startServer, type RunningApi } from '../../apps/api/src/server';
import { startEmbedded, type EmbeddedOptions, type RunningServer } from '../../scripts/embedded';
import { registerCitizens } from './citizens';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from './env';
import { startChild, type ChildService } from './spawn';

/**
 * A second API process (in this test's process) beside `first`, as in the distributed deployment: the
 * same database, Redis namespace, master key and chain, the API alone (no projector or workers of its
 * own). `env` adds to or overrides its environment.
 */
export async function startSecondApi(first: RunningApi, env: Record<string, string> = {}): Promise<RunningApi> {
  const { config } = first.services;
  const second = await startServer(
    testConfig({
      DATABASE_URL: config.databaseUrl,
      REDIS_URL,
      REDIS_PREFIX: config.redisPrefix,
      DATA_DIR: tempDir('second-api'),
      SERVICE_MASTER_KEY: config.serviceMasterKey,
      SOLANA_RPC_URL: first.solanaRpcUrl,
      ...env,
    }),
  );
  // The bundled chain's WebSocket is on a free port, not the RPC port + 1 that SOLANA_RPC_URL implies.
  await second.services.chain.close();
  second.services.chain = new SolanaChain({ ...first.services.chain.options, priceUrl: second.services.chain.options.priceUrl });
  return second;
}

export interface Deployment {
  apiA: ChildService;
  apiB: ChildService;
  projector: ChildService;
}

/**
 * The production shape, each part in a process of its own: two API processes and one projector, sharing the
 * databases `env` names (DATABASE_URL, and EVENTSTORE_URL if any), a Redis namespace and a master key.
 */
export async function startDeployment(label: string, env: Record<string, string>): Promise<Deployment> {
  const shared = {
    ...env,
    REDIS_URL,
    REDIS_PREFIX: `t${randomBytes(4).toString('hex')}`,
    SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
    DATA_DIR: tempDir(label),
    PORT: '0',
    HOST: '127.0.0.1',
    PROJECTOR_HEALTH_PORT: '0',
    RATE_LIMIT_RPS: '100000',
    REGISTER_PER_IP_PER_HOUR: '100000',
  };
  const [apiA, apiB] = await Promise.all([startChild('apps/api/src/main.ts', [], shared), startChild('apps/api/src/main.ts', [], shared)]);
  const projector = await startChild('apps/projector/src/main.ts', [], shared, 'projector following the ledger');
  return { apiA, apiB, projector };
}

export interface EmbeddedService {
  db: FreshDatabase;
  server: RunningServer;
  /** Stops the service and drops its database. */
  close(): Promise<void>;
}

/**
 * The service in this process, with Redis and a master key of its own, over a fresh database: what an e2e file starts
 * once for its tests. `env` adds to or overrides the configuration.
 */
export async function embeddedService(label: string, env: Record<string, string> = {}, options: EmbeddedOptions = {}): Promise<EmbeddedService> {
  const db = await freshDatabase(label);
  const config = testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir(label), SERVICE_MASTER_KEY: randomBytes(32).toString('base64'), ...env });
  const server = await startEmbedded(config, options).catch(async (error) => {
    await db.drop();
    throw error;
  });
  return {
    db,
    server,
    async close() {
      await server.close();
      await db.drop();
    },
  };
}

export interface TamperableService {
  server: RunningServer;
  /** A superuser session on the service's database, to change stored rows behind its back. */
  sql: pg.Client;
  close(): Promise<void>;
}

/** The service in this process (without Redis) over a fresh database whose ledger holds `citizens` registrations. */
export async function tamperableService(label: string, citizens: number): Promise<TamperableService> {
  const db = await freshDatabase(label);
  const server = await startEmbedded(testConfig({ DATABASE_URL: db.url, DATA_DIR: tempDir(label), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }));
  const sql = new pg.Client({ connectionString: db.url });
  const close = async () => {
    await sql.end().catch(() => undefined);
    await server.close();
    await db.drop();
  };
  try {
    await sql.connect();
    await registerCitizens(server.url, citizens, label);
  } catch (error) {
    await close();
    throw error;
  }
  return { server, sql, close };
}
