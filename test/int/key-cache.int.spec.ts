import { sql } from 'kysely';
import { newApiKey } from '@svc/vault';
import { until } from '../support/until';
import { twoVaultProcesses, vaultCitizen } from '../support/vaultCitizens';

jest.setTimeout(30_000);

/** Two vaults on one PostgreSQL database stand for two API processes. */
describe('verified keys kept per process, forgotten on rotation', () => {
  const processes = twoVaultProcesses('keycache');

  const citizen = () => vaultCitizen(processes.vault);

  /** Removes a credential row the way no code path does: with nobody told. */
  const dropRowSilently = (agentId: string) => sql`delete from vault.credentials where agent_id = ${agentId}`.execute(processes.here.db);

  it('answers a key it verified without reading its row again', async () => {
    const { agentId, apiKey } = await citizen();
    expect(await processes.vault.authenticate(apiKey)).toBe(agentId);
    await dropRowSilently(agentId);
    expect(await processes.vault.authenticate(apiKey)).toBe(agentId);
    // The process that never verified it reads the row, and finds none.
    expect(await processes.other.authenticate(apiKey)).toBeUndefined();
  });

  it('refuses a wrong secret under a cached key id', async () => {
    const { agentId, apiKey } = await citizen();
    expect(await processes.vault.authenticate(apiKey)).toBe(agentId);
    const forged = apiKey.slice(0, -4) + (apiKey.endsWith('2222') ? '3333' : '2222');
    expect(await processes.vault.authenticate(forged)).toBeUndefined();
  });

  it('forgets a key rotated in this process before the rotation returns', async () => {
    const { agentId, apiKey } = await citizen();
    expect(await processes.vault.authenticate(apiKey)).toBe(agentId);
    const next = newApiKey();
    expect(await processes.vault.rotateKey(agentId, apiKey, next)).toBe(true);
    expect(await processes.vault.authenticate(apiKey)).toBeUndefined();
    expect(await processes.vault.authenticate(next)).toBe(agentId);
  });

  it('forgets a key rotated in another process once its notification arrives', async () => {
    const { agentId, apiKey } = await citizen();
    expect(await processes.vault.authenticate(apiKey)).toBe(agentId);
    expect(await processes.other.authenticate(apiKey)).toBe(agentId);
    const next = newApiKey();
    expect(await processes.other.rotateKey(agentId, apiKey, next)).toBe(true);
    // Both listeners run in this one test process, so the order they are read in is not fixed; across
    // processes the rotation's answer only leaves after the database sent the notification (distributed.e2e).
    await until('the old key forgotten here', 5_000, async () => (await processes.vault.authenticate(apiKey)) === undefined);
    expect(await processes.vault.authenticate(next)).toBe(agentId);
  });

  it('keeps nothing while the rotation notifications are not heard, and caches again once they are', async () => {
    const { agentId, apiKey } = await citizen();
    expect(await processes.vault.authenticate(apiKey)).toBe(agentId);
    expect(processes.vault.verifiedKeys).toBeGreaterThan(0);
    const cut = await sql<{ n: number }>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where datname = ${processes.db.name} and application_name = 'keycache-here' and query like 'LISTEN%'`.execute(processes.there.db);
    expect(cut.rows[0]!.n).toBe(1);
    await until('the cache emptied when the subscription was cut', 5_000, () => processes.vault.verifiedKeys === 0);
    // A row changed behind its back now is seen: nothing answers from memory.
    await dropRowSilently(agentId);
    expect(await processes.vault.authenticate(apiKey)).toBeUndefined();
    const again = await citizen();
    await until('keys cached again once the subscription is back', 10_000, async () => {
      await processes.vault.authenticate(again.apiKey);
      return processes.vault.verifiedKeys > 0;
    });
  });
});
