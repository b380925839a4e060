import { SolanaJSONRPCError, type Connection } from '@solana/web3.js';
import { ChainError, isRpcUnreachable } from './errors';
import { confirmSignature, publicKeyOf, recentBlockhash, type RecentBlockhash, type WalletAddress } from './transactions';

/** Solana mainnet-beta's genesis hash: a cluster that has it gives no test SOL. */
export const MAINNET_GENESIS_HASH = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';

/** A cluster's faucet that refuses (devnet's per-IP and per-day limits) may give again after a while, not at once. */
export const FAUCET_RETRY_AFTER_SECONDS = 60;

/** An airdrop the cluster's faucet accepted, and the blockhash it is confirmed against. */
export interface AirdropRequested extends RecentBlockhash {
  signature: string;
}

/**
 * Asks the cluster's faucet (`requestAirdrop`) for `lamports` into `wallet`. A faucet that refuses or fails is
 * ChainError `unavailable` with a Retry-After: nothing was sent. An RPC that cannot be reached is rethrown.
 */
export async function requestAirdrop(connection: Connection, wallet: WalletAddress, lamports: bigint): Promise<AirdropRequested> {
  // Taken before the request: the airdrop's own blockhash is this one or later, so it lands before this one expires.
  const recent = await recentBlockhash(connection);
  try {
    const signature = await connection.requestAirdrop(publicKeyOf(wallet), Number(lamports));
    return { signature, ...recent };
  } catch (error) {
    if (error instanceof SolanaJSONRPCError || !isRpcUnreachable(error)) {
      throw ChainError.refusal('unavailable', `the cluster’s faucet refused the airdrop (${(error as Error).message}); nothing was sent, try again later`, {}, FAUCET_RETRY_AFTER_SECONDS);
    }
    throw error;
  }
}

/**
 * Waits until the airdrop is confirmed. One that expired without landing, or landed and failed, is ChainError
 * `unavailable`: nothing arrived. Anything else (the RPC unreachable, an outcome still open) is rethrown, and the
 * airdrop may still land.
 */
export async function confirmAirdrop(connection: Connection, airdrop: AirdropRequested): Promise<void> {
  try {
    await confirmSignature(connection, airdrop);
  } catch (error) {
    if (error instanceof ChainError) {
      throw ChainError.refusal('unavailable', `the cluster’s faucet did not deliver the airdrop (${error.message}); nothing arrived, try again later`, {}, FAUCET_RETRY_AFTER_SECONDS);
    }
    throw error;
  }
}
