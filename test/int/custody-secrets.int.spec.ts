import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { ulid } from 'ulid';
import { newApiKey } from '@svc/vault';
import { twoVaultProcesses } from '../support/vaultCitizens';

jest.setTimeout(30_000);

/** Two vaults on one PostgreSQL database stand for two API processes. */
describe('custody secrets kept sealed per process', () => {
  const processes = twoVaultProcesses('custody');

  async function custodian(): Promise<{ agentId: string; secret: Buffer }> {
    const agentId = `agent_${ulid()}`;
    const secret = randomBytes(64);
    await processes.vault.addCredential({ agentId, apiKey: newApiKey(), walletSecret: secret });
    return { agentId, secret };
  }

  const dropRowSilently = (agentId: string) => sql`delete from vault.wallet_secrets where agent_id = ${agentId}`.execute(processes.here.db);

  it('signs again without reading the row, where another process reads it', async () => {
    const { agentId, secret } = await custodian();
    expect(await processes.vault.walletSecret(agentId)).toEqual(secret);
    await dropRowSilently(agentId);
    expect(await processes.vault.walletSecret(agentId)).toEqual(secret);
    expect(await processes.other.walletSecret(agentId)).toBeUndefined();
  });

  it('gives each signing its own copy: wiping one leaves the next intact', async () => {
    const { agentId, secret } = await custodian();
    (await processes.vault.walletSecret(agentId))!.fill(0);
    expect(await processes.vault.walletSecret(agentId)).toEqual(secret);
  });

  it('keeps the secret sealed, and forgets it with a refused registration', async () => {
    const { agentId, secret } = await custodian();
    expect(await processes.vault.walletSecret(agentId)).toEqual(secret);
    // What the process keeps is the stored row's sealed text itself, not a decoding of it.
    const { rows } = await sql<{ sealed: string }>`select sealed from vault.wallet_secrets where agent_id = ${agentId}`.execute(processes.here.db);
    const kept = (processes.vault as unknown as { sealedWallets: Map<string, unknown> }).sealedWallets.get(agentId);
    expect(kept).toBe(rows[0]!.sealed);
    expect(kept).not.toContain(secret.toString('base64'));
    await processes.vault.removeCredential(agentId);
    expect(await processes.vault.walletSecret(agentId)).toBeUndefined();
  });
});
