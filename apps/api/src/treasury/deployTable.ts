import type { AddressLookupTableAccount } from '@solana/web3.js';
import { Rejected } from '@svc/domain';
import { TREASURY_WALLET } from '@svc/runtime';
import type { Services } from '../services';

/** How long a deploy refused for an unfunded treasury is told to wait: the workers look at its balance every 2 s. */
const TREASURY_RETRY_AFTER_SECONDS = 10;

/** Whether the treasury has paid for the deploy lookup table; when not, the wallet to fund. */
export type TreasuryReadiness = { treasury: 'ok' } | { treasury: 'unfunded'; treasury_address: string };

export async function treasuryReadiness(services: Services): Promise<TreasuryReadiness> {
  if (await services.deployTable.made()) return { treasury: 'ok' };
  return { treasury: 'unfunded', treasury_address: (await services.serviceWallets.wallet(TREASURY_WALLET)).publicKey };
}

/**
 * The deploy lookup table the workers made. While there is none the deploy cannot be sent, for a reason that is
 * the service's, not the caller's: 503 treasury_unfunded, naming the wallet that pays for it.
 */
export async function deployTableOrRefuse(services: Services): Promise<AddressLookupTableAccount> {
  const table = await services.deployTable.existing();
  if (table) return table;
  const address = (await services.serviceWallets.wallet(TREASURY_WALLET)).publicKey;
  throw new Rejected(
    'treasury_unfunded',
    `this deploy is too large for one transaction without the service's shared address lookup table, which the treasury ` +
      `${address} has not paid for yet: the service makes it within seconds of that wallet being funded; retry then, or ` +
      'shorten name, symbol and metadata_uri',
    { treasury_address: address },
    TREASURY_RETRY_AFTER_SECONDS,
  );
}
