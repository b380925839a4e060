import { PublicKey, type Connection } from '@solana/web3.js';

/**
 * What to read from an action's confirmed transaction before it is recorded, for records whose amounts only
 * the chain knows (a buy gets what the curve gives, a distribution pays what the vault held when it ran).
 */
export interface ObserveSpec {
  /** The wallet whose SOL (and `mint` balance) change is recorded. */
  wallet: string;
  mint?: string;
  /** Accounts of the wallet's own that the transaction may open: their opening rent is not a payment. */
  rentOf?: string[];
}

/** Recorded under `details.observed`; lamports are integers, token base units a decimal string. */
export interface Observed {
  fee_lamports: number;
  sol_change_lamports: number;
  token_change_raw?: string;
  rent_lamports: number;
  /** The slot the transaction landed in. */
  slot: number;
}

/** Reads the confirmed transaction's balances (meta) for `spec`; throws when the node cannot show it yet. */
export async function observeTransaction(connection: Connection, signature: string, spec: ObserveSpec): Promise<Observed> {
  const tx = await connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
  const meta = tx?.meta;
  if (!tx || !meta) throw new Error(`transaction ${signature} is confirmed but its balances cannot be read yet`);
  const keys = tx.transaction.message.getAccountKeys({ accountKeysFromLookups: meta.loadedAddresses }).keySegments().flat();
  const indexOf = (address: string) => keys.findIndex((key) => key.equals(new PublicKey(address)));
  const walletAt = indexOf(spec.wallet);
  if (walletAt < 0) throw new Error(`transaction ${signature} does not name ${spec.wallet}`);
  const observed: Observed = {
    fee_lamports: meta.fee,
    sol_change_lamports: meta.postBalances[walletAt]! - meta.preBalances[walletAt]!,
    rent_lamports: 0,
    slot: tx.slot,
  };
  for (const address of new Set(spec.rentOf ?? [])) {
    const at = indexOf(address);
    if (at >= 0 && meta.preBalances[at] === 0) observed.rent_lamports += meta.postBalances[at]!;
  }
  if (spec.mint !== undefined) {
    const held = (balances: typeof meta.postTokenBalances) =>
      (balances ?? []).filter((b) => b.mint === spec.mint && b.owner === spec.wallet).reduce((sum, b) => sum + BigInt(b.uiTokenAmount.amount), 0n);
    observed.token_change_raw = (held(meta.postTokenBalances) - held(meta.preTokenBalances)).toString();
  }
  return observed;
}
