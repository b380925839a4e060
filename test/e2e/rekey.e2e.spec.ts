import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { keyId, seal } from '@svc/vault';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { registerCitizen, type TestCitizen } from '../support/citizens';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call } from '../support/http';
import { runEntry } from '../support/spawn';

jest.setTimeout(180_000);

/** A master key rotation end to end: wallets sealed under the old key (v1 and v2) sign after `npm run rekey`. */
describe('npm run rekey', () => {
  const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
  const dataDir = tempDir('rekey');
  let db: FreshDatabase;
  let server: RunningServer | undefined;
  const start = async (env: Record<string, string>) => {
    server = await startEmbedded(testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: dataDir, ...env }));
    return server;
  };
  const rekey = (args: string[], env: Record<string, string>) => runEntry('scripts/rekey.ts', args, { DATABASE_URL: db.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
  const sealedValues = async () => {
    const rows = await sql<{ sealed: string }>`
      select sealed from vault.wallet_secrets union all select sealed from vault.service_wallets
      union all select url_sealed from vault.doorbells union all select secret_sealed from vault.doorbells
      union all select response from vault.idempotency_keys where response is not null`.execute(server!.services.database.db);
    return rows.rows.map((r) => r.sealed);
  };

  beforeAll(async () => {
    db = await freshDatabase('rekey');
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('re-seals everything under the new key in resumable runs, and a wallet sealed before signs a transfer after', async () => {
    const before = await start({ SERVICE_MASTER_KEY: oldKey.toString('base64') });
    const alice = await registerCitizen(before.url, 'rka');
    const carol = await registerCitizen(before.url, 'rkc');
    // Carol's wallet as a release before the key hierarchy sealed it: v1, under the master key itself.
    await sql`update vault.wallet_secrets set sealed = ${seal(oldKey, carol.keypair!.secretKey, `wallet:${carol.id}`)} where agent_id = ${carol.id}`.execute(
      before.services.database.db,
    );
    const hook = `https://example.com/hook?token=${randomBytes(8).toString('hex')}`;
    expect((await call(before.url, 'POST', '/api/v1/doorbell', { key: alice.key, body: { url: hook, secret: 'a doorbell secret of 16+ bytes' } })).status).toBe(201);
    // Under an Idempotency-Key: the stored reply is sealed too.
    for (const who of [alice, carol]) expect((await call(before.url, 'POST', '/api/v1/faucet', { key: who.key, body: { sol: 1 }, headers: { 'Idempotency-Key': who.id } })).status).toBe(200);
    expect((await sealedValues()).every((v) => v.startsWith('v1.') || v.startsWith(`v2.${keyId(oldKey)}.`))).toBe(true);
    await before.close();

    const rotation = { SERVICE_MASTER_KEY: newKey.toString('base64'), SERVICE_MASTER_KEY_OLD: oldKey.toString('base64') };
    const refused = await rekey([], { SERVICE_MASTER_KEY: newKey.toString('base64') });
    expect([refused.status, refused.output]).toEqual([1, expect.stringContaining('SERVICE_MASTER_KEY_OLD')]);
    // A run stopped after two rows; the next one goes on from there, and a third finds nothing left.
    const first = await rekey(['--limit', '2', '--batch', '1'], rotation);
    expect([first.status, first.output]).toEqual([0, expect.stringMatching(/rekey: 2 rows re-sealed under key [0-9a-f]{16} .* rows\/s\); 0 changed meanwhile; not complete/)]);
    const second = await rekey([], rotation);
    expect([second.status, second.output]).toEqual([0, expect.stringMatching(/rekey: \d+ rows re-sealed .*complete: SERVICE_MASTER_KEY_OLD may go/)]);
    const third = await rekey([], rotation);
    expect(third.output).toMatch(/rekey: 0 rows re-sealed/);

    // The old key is gone: only the new one is given.
    const after = await start({ SERVICE_MASTER_KEY: newKey.toString('base64') });
    const values = await sealedValues();
    // Two wallets, the treasury's, a doorbell's URL and secret, two stored replies.
    expect(values.length).toBe(7);
    expect(values.filter((v) => !v.startsWith(`v2.${keyId(newKey)}.`))).toEqual([]);
    const bob = await registerCitizen(after.url, 'rkb');
    for (const who of [alice, carol] as TestCitizen[]) {
      const sent = await call(after.url, 'POST', '/api/v1/transfer', { key: who.key, body: { to: bob.wallet, amount: 0.1 } });
      expect([who.handle, sent.status, sent.body.executed]).toEqual([who.handle, 200, true]);
      const onChain = await after.services.chain.connection.getTransaction(sent.body.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
      expect(onChain?.transaction.message.staticAccountKeys[0]!.toBase58()).toBe(who.wallet);
    }
    // The doorbell's URL hash moved with the key: its owner still lists it and removes it by URL.
    const listed = await call(after.url, 'GET', '/api/v1/doorbell', { key: alice.key });
    expect(listed.body.doorbells.map((d: { url: string }) => d.url)).toEqual([hook]);
    expect((await call(after.url, 'DELETE', `/api/v1/doorbell?url=${encodeURIComponent(hook)}`, { key: alice.key })).status).toBe(200);
  });
});
