import { randomBytes } from 'node:crypto';
import { freshDatabase, REDIS_URL, tempDir, type FreshDatabase } from '../support/env';
import { call, type Reply } from '../support/http';
import { registerCitizen } from '../support/citizens';
import { startLocalnetChild, type LocalnetProcess } from '../support/localnet';
import { startChild, type ChildService } from '../support/spawn';

jest.setTimeout(120_000);

/** Hosted RPCs put their key in the URL: in the split shape, no reply and no log line may show it. */
describe('an RPC URL carrying a provider token', () => {
  const token = `tok${randomBytes(12).toString('hex')}`;
  let chain: LocalnetProcess;
  let db: FreshDatabase;
  let api: ChildService;
  let projector: ChildService;
  let workers: ChildService;
  const replies: string[] = [];

  const record = async (reply: Promise<Reply>): Promise<Reply> => {
    const done = await reply;
    replies.push(JSON.stringify(done.body));
    return done;
  };

  beforeAll(async () => {
    chain = await startLocalnetChild(tempDir('rpc-secrecy-chain'));
    db = await freshDatabase('rpc_secrecy');
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL,
      REDIS_PREFIX: `t${randomBytes(4).toString('hex')}`,
      SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
      DATA_DIR: tempDir('rpc-secrecy'),
      SOLANA_RPC_URL: `${chain.url}/?api-key=${token}`,
      PORT: '0',
      HOST: '127.0.0.1',
      PROJECTOR_HEALTH_PORT: '0',
      LOG_LEVEL: 'debug',
    };
    api = await startChild('apps/api/src/main.ts', [], env);
    projector = await startChild('apps/projector/src/main.ts', [], env, 'projector following the ledger');
    workers = await startChild('apps/workers/src/main.ts', [], env, 'doorbell worker started');
  });

  afterAll(async () => {
    await Promise.all([api?.stop(), projector?.stop(), workers?.stop()]);
    await chain?.stop();
    await db?.drop();
  });

  it('shows only its origin in the start-up log, and in no reply or log line the token', async () => {
    const listening = JSON.parse(api.output.find((line) => line.includes('"msg":"service listening"'))!);
    expect(listening.solana_rpc).toBe(new URL(chain.url).origin);

    const alice = await registerCitizen(api.url, 'rpcsec');
    const bob = await registerCitizen(api.url, 'rpcsec');
    expect((await record(call(api.url, 'POST', '/api/v1/faucet', { key: alice.key, body: { sol: 1 } }))).status).toBe(200);
    const sent = await record(call(api.url, 'POST', '/api/v1/transfer', { key: alice.key, body: { to: bob.wallet, amount: 0.1 } }));
    expect(sent.status).toBe(200);
    expect(sent.body.explorer).toBe(`https://explorer.solana.com/tx/${sent.body.signature}?cluster=custom&customUrl=${encodeURIComponent(new URL(chain.url).origin)}`);
    for (const path of ['/api/v1/wallet', '/api/v1/me', '/api/v1/treasury', '/api/v1/tokens', '/readyz', '/api/v1/surface', '/openapi.json', '/.well-known/agent.json']) {
      await record(call(api.url, 'GET', path, { key: alice.key }));
    }
    expect(replies.join('\n')).not.toContain(token);
    for (const service of [api, projector, workers]) expect(service.output.join('\n')).not.toContain(token);
  });
});
