import { SolanaChain } from '@svc/chain';
import { startServer, type RunningApi } from '../../apps/api/src/server';
import { REDIS_URL, tempDir, testConfig } from './env';

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
