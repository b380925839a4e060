import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { ulid } from 'ulid';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { newApiKey, Vault } from '@svc/vault';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

jest.setTimeout(30_000);

/** Two vaults on one PostgreSQL database stand for two API processes. */
describe('custody secrets kept sealed per process', () => {
  let db: FreshDatabase;
  let here: SqlDatabase;
  let there: SqlDatabase;
  let vault: Vault;
  let other: Vault;
  const masterKey = randomBytes(32);

  beforeAll(async () => {
    db = await freshDatabase('custody');
    here = await openDatabase({ url: db.url, dataDir: tempDir('custody'), applicationName: 'custody-here' });
    there = await openDatabase({ url: db.url, dataDir: tempDir('custody'), applicationName: 'custody-there' });
    vault = await new Vault(here, masterKey).init();
    other = await new Vault(there, masterKey).init();
  });
  afterAll(async () => {
    await here?.close();
    await there?.close();
    await db?.drop();
  });

  async function custodian(): Promise<{ agentId: string; secret: Buffer }> {
    const agentId = `agent_${ulid()}`;
    const secret = randomBytes(64);
    await vault.addCredential({ agentId, apiKey: newApiKey(), walletSecret: secret });
    return { agentId, secret };
  }

  const dropRowSilently = (agentId: string) => sql`delete from vault.wallet_secrets where agent_id = ${agentId}`.execute(here.db);

  it('signs again without reading the row, where another process reads it', async () => {
    const { agentId, secret } = await custodian();
    expect(await vault.walletSecret(agentId)).toEqual(secret);
    await dropRowSilently(agentId);
    expect(await vault.walletSecret(agentId)).toEqual(secret);
    expect(await other.walletSecret(agentId)).toBeUndefined();
  });

  it('gives each signing its own copy: wiping one leaves the next intact', async () => {
    const { agentId, secret } = await custodian();
    (await vault.walletSecret(agentId))!.fill(0);
    expect(await vault.walletSecret(agentId)).toEqual(secret);
  });

  it('keeps the secret sealed, and forgets it with a refused registration', async () => {
    const { agentId, secret } = await custodian();
    expect(await vault.walletSecret(agentId)).toEqual(secret);
    const kept = JSON.stringify([...(vault as unknown as { sealedWallets: Map<string, string> }).sealedWallets]);
    expect(kept).not.toContain(secret.toString('base64'));
    expect(kept).not.toContain(secret.toString('hex'));
    await vault.removeCredential(agentId);
    expect(await vault.walletSecret(agentId)).toBeUndefined();
  });
});
