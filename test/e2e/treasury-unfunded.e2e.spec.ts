import { Connection, LAMPORTS_PER_SOL, PublicKey, type VersionedTransactionResponse } from '@solana/web3.js';
import { startBundledLocalnet, type Localnet } from '@svc/app-localnet';
import { DEPLOY_TABLE_SETTING, TREASURY_WALLET } from '@svc/runtime';
import { startServer, type RunningApi } from '../../apps/api/src/server';
import { airdrop, registerCitizen } from '../support/citizens';
import { REDIS_URL, tempDir, testConfig } from '../support/env';
import { call } from '../support/http';
import { closeConnection } from '../support/localnet';
import { freePortPair } from '../support/ports';
import { withRpcProxy } from '../support/rpcProxy';
import { embeddedService, type EmbeddedService } from '../support/servers';
import { until } from '../support/until';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
/** A dev buy with the longest name, symbol and metadata_uri: over 1,232 bytes without the shared lookup table. */
const LONG_DEPLOY = { name: 'N'.repeat(32), symbol: 'S'.repeat(10), image: PNG, metadata_uri: `https://example.com/${'m'.repeat(180)}`, dev_buy_sol: 0.01, fee_share: false };

/**
 * The service told only its three URLs (DATABASE_URL, REDIS_URL, SOLANA_RPC_URL) of a fresh bundled chain, on which
 * nobody funded the treasury: the chain says what it is, so prices come from it; /readyz names the treasury to fund;
 * a deploy that needs the treasury's lookup table is the service's 503, not the caller's `insufficient`; once the
 * treasury is funded the workers make the table on their own and the same deploy goes through.
 */
describe('an unfunded treasury on a chain the service is told only the URL of', () => {
  let chain: Localnet;
  let connection: Connection;
  let service: EmbeddedService;
  let base: string;
  let treasury: string;

  beforeAll(async () => {
    chain = await startBundledLocalnet({ port: await freePortPair(), host: '127.0.0.1', dataDir: null, solUsd: 150 });
    connection = new Connection(chain.rpcUrl, { commitment: 'confirmed', wsEndpoint: chain.wsUrl });
    service = await embeddedService('treasury_unfunded', { SOLANA_RPC_URL: chain.rpcUrl }, { outboxRecoveryEveryMs: 3_600_000 });
    base = service.server.url;
    treasury = (await service.server.services.serviceWallets.wallet(TREASURY_WALLET)).publicKey;
  }, 90_000);
  afterAll(async () => {
    await service?.close();
    if (connection) await closeConnection(connection);
    await chain?.close();
  });

  const readyz = async () => (await call(base, 'GET', '/readyz')).body;

  it('asks the chain what it is and prices with it: an API process given only the three URLs has USD figures', async () => {
    const api: RunningApi = await startServer(
      testConfig({
        DATABASE_URL: service.db.url,
        REDIS_URL,
        SOLANA_RPC_URL: chain.rpcUrl,
        DATA_DIR: tempDir('treasury-unfunded-api'),
        SERVICE_MASTER_KEY: service.server.services.config.serviceMasterKey,
      }),
    );
    try {
      expect(api.services.config).toMatchObject({ priceUrl: chain.rpcUrl, jupiterUrl: chain.rpcUrl });
      const citizen = await registerCitizen(api.url, 'priced');
      await airdrop(connection, citizen.wallet, 1);
      const wallet = await call(api.url, 'GET', '/api/v1/wallet', { key: citizen.key });
      expect(wallet.status).toBe(200);
      expect(wallet.body).toMatchObject({ sol: 1, sol_price_usd: 150, sol_usd: 150, portfolio_usd: 150 });
    } finally {
      await api.close();
    }
  });

  it('reports the treasury unfunded on /readyz with the address to fund, and stays ready', async () => {
    expect(await readyz()).toMatchObject({ ok: true, status: 'ready', chain: 'ok', treasury: 'unfunded', treasury_address: treasury });
  });

  it('answers a deploy that needs the lookup table 503 treasury_unfunded naming the treasury, then, once it is funded, deploys', async () => {
    const dev = await registerCitizen(base, 'longdev');
    await airdrop(connection, dev.wallet, 2);
    const refused = await call(base, 'POST', '/api/v1/tokens/deploy', { key: dev.key, body: LONG_DEPLOY });
    expect([refused.status, refused.body.error.code, refused.body.error.treasury_address]).toEqual([503, 'treasury_unfunded', treasury]);
    expect(refused.body.error.message).toContain(treasury);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Nothing was sent: the caller paid nothing for the service's shortfall.
    expect(await connection.getBalance(new PublicKey(dev.wallet), 'confirmed')).toBe(2 * LAMPORTS_PER_SOL);

    await airdrop(connection, treasury, 1);
    const ready = await until('the workers to make the lookup table', 30_000, async () => {
      const body = await readyz();
      return body.treasury === 'ok' ? body : undefined;
    }, 100);
    expect(ready).not.toHaveProperty('treasury_address');

    // An API process that has not read the table yet reads it from the chain: not answered, the deploy is 503, not 500.
    const table = (await service.server.services.serviceWallets.setting(DEPLOY_TABLE_SETTING))!;
    const api = await startServer(
      testConfig({ DATABASE_URL: service.db.url, REDIS_URL, SOLANA_RPC_URL: chain.rpcUrl, DATA_DIR: tempDir('treasury-unfunded-api2'), SERVICE_MASTER_KEY: service.server.services.config.serviceMasterKey }),
    );
    try {
      const unread = await withRpcProxy(
        api.services,
        (raw) => (raw.includes('"getAccountInfo"') && raw.includes(table) ? { status: 503, body: 'no healthy upstream' } : undefined),
        () => call(api.url, 'POST', '/api/v1/tokens/deploy', { key: dev.key, body: LONG_DEPLOY }),
      );
      expect([unread.status, unread.body.error?.code]).toEqual([503, 'unavailable']);
    } finally {
      await api.close();
    }

    const deployed = await call(base, 'POST', '/api/v1/tokens/deploy', { key: dev.key, body: LONG_DEPLOY });
    expect([deployed.status, deployed.body.executed]).toEqual([201, true]);
    const landed: VersionedTransactionResponse | null = await connection.getTransaction(deployed.body.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(landed!.transaction.message.addressTableLookups).toHaveLength(1);
  });
});
