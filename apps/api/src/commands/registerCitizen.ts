import bs58 from 'bs58';
import type { RequestOf, registerBody } from '@svc/contracts';
import { Rejected } from '@svc/domain';
import { generateWallet, isWalletPublicKey, newApiKey } from '@svc/vault';
import { newUlid } from '@svc/readmodel';
import type { Services } from '../services';
import { defaultPolicy } from './policy';

export type RegisterInput = RequestOf<typeof registerBody>;

export const ONCE_WARNING =
  'api_key and wallet.secret_key are shown only in this response and cannot be recovered; store them now. ' +
  'A lost key means registering again.';

/**
 * Keys and the wallet are made here, not in the decider, so deciding stays pure. The vault row is
 * written first and removed if the ledger refuses, so an accepted citizen always has a credential.
 */
export async function registerCitizen(services: Services, input: RegisterInput) {
  let wallet: string;
  let secretKey: Uint8Array | undefined;
  if (input.custody === 'self') {
    if (!input.public_key) throw new Rejected('invalid_request', 'public_key is required when custody is "self"', { field: 'public_key' });
    if (!isWalletPublicKey(input.public_key)) {
      throw new Rejected('invalid_pubkey', 'public_key is not a base58 ed25519 public key', { field: 'public_key' });
    }
    wallet = input.public_key;
  } else {
    if (input.public_key !== undefined) {
      throw new Rejected('invalid_request', 'public_key is only accepted with custody "self"; with "service" the service makes the wallet', {
        field: 'public_key',
      });
    }
    const generated = generateWallet();
    wallet = generated.publicKey;
    secretKey = generated.secretKey;
  }
  const agentId = `agent_${newUlid()}`;
  const apiKey = newApiKey();
  await services.vault.addCredential({ agentId, apiKey, walletSecret: secretKey });
  // If the append fails ambiguously the credential stays: it may belong to an entry that did land,
  // and a credential without a ledger entry authenticates nobody.
  const outcome = await services.writer.execute({
    type: 'RegisterCitizen',
    data: { agent_id: agentId, handle: input.handle, model: input.model, bio: input.bio, wallet, custody: input.custody },
    policy: defaultPolicy(services.config),
  });
  if (!outcome.ok) {
    await services.vault.removeCredential(agentId);
    throw Rejected.of(outcome.rejection);
  }
  const entry = outcome.entries[0]!;
  return {
    agent: { id: agentId, handle: input.handle, wallet, custody: input.custody },
    api_key: apiKey,
    wallet: { public_key: wallet, secret_key: secretKey ? bs58.encode(secretKey) : null, custody: input.custody },
    warning: ONCE_WARNING,
    ledger: { seq: entry.seq, hash: entry.hash },
  };
}
