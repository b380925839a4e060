import { ulid } from 'ulid';
import { newApiKey, type Vault } from '@svc/vault';

/** A credential stored straight in the vault, as a registration stores it: its agent id and the key that opens it. */
export async function vaultCitizen(vault: Vault): Promise<{ agentId: string; apiKey: string }> {
  const agentId = `agent_${ulid()}`;
  const apiKey = newApiKey();
  await vault.addCredential({ agentId, apiKey });
  return { agentId, apiKey };
}
