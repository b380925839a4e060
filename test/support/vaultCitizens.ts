import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { newApiKey, Vault } from '@svc/vault';
import { freshDatabase, tempDir, type FreshDatabase } from './env';

/** A credential stored straight in the vault, as a registration stores it: its agent id and the key that opens it. */
export async function vaultCitizen(vault: Vault): Promise<{ agentId: string; apiKey: string }> {
  const agentId = `agent_${ulid()}`;
  const apiKey = newApiKey();
  await vault.addCredential({ agentId, apiKey });
  return { agentId, apiKey };
}

export interface VaultProcesses {
  db: FreshDatabase;
  /** The connections of `vault`, whose application name is `<name>-here`. */
  here: SqlDatabase;
  /** The connections of `other`, whose application name is `<name>-there`. */
  there: SqlDatabase;
  vault: Vault;
  other: Vault;
}

/**
 * Two vaults under one master key on one fresh PostgreSQL database, standing for two API processes: opened
 * before the suite's tests, closed and dropped after them.
 */
export function twoVaultProcesses(name: string): VaultProcesses {
  const processes = {} as VaultProcesses;
  const masterKey = randomBytes(32);
  beforeAll(async () => {
    processes.db = await freshDatabase(name);
    processes.here = await openDatabase({ url: processes.db.url, dataDir: tempDir(name), applicationName: `${name}-here` });
    processes.there = await openDatabase({ url: processes.db.url, dataDir: tempDir(name), applicationName: `${name}-there` });
    processes.vault = await new Vault(processes.here, masterKey).init();
    processes.other = await new Vault(processes.there, masterKey).init();
  });
  afterAll(async () => {
    await processes.here?.close();
    await processes.there?.close();
    await processes.db?.drop();
  });
  return processes;
}
