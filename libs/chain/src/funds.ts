import type { Connection, PublicKey } from '@solana/web3.js';
import { ChainError } from './errors';
import { rawToUi, tokenBalanceRaw } from './tokens';
import { assertCanPay, type WalletAddress } from './transactions';

/**
 * What a transaction takes out of its fee payer's wallet besides the network fee: checked on the chain's state
 * just before it is signed, so what cannot succeed is refused for nothing (`insufficient`, `no_balance`).
 */
export interface Funds {
  /** SOL it pays out: an amount sent, SOL spent on a trade, rent of accounts it surely opens. */
  lamports: bigint;
  /** The wallet's SOL when it was read just now, in the batch that read the market. */
  balance?: bigint;
  /** Accounts it opens (of `bytes` each): their rent is needed too, unless the one at `address` exists already. */
  opens?: Array<{ address?: PublicKey; bytes: number }>;
  /** Tokens it moves out of the wallet, which the wallet must hold. */
  tokens?: { mint: PublicKey; tokenProgram: PublicKey; raw: bigint; decimals: number };
  /**
   * The chain's own preflight refuses a shortfall of `lamports` as `insufficient` (a plain SOL payment), so the
   * balance is not read before signing: only a refusal is explained afterwards, with what is needed and held.
   */
  chainRefuses?: boolean;
}

/** Refuses, before anything is signed, a transaction whose fee payer cannot cover `funds` and `fee`. */
export async function assertFunds(connection: Connection, wallet: PublicKey, funds: Funds, fee: bigint | Promise<bigint>): Promise<void> {
  const { tokens } = funds;
  const [held, opening] = await Promise.all([
    tokens ? tokenBalanceRaw(connection, wallet, tokens.mint, tokens.tokenProgram) : undefined,
    openingRent(connection, funds.opens ?? []),
  ]);
  if (tokens && held !== undefined) {
    if (held === 0n) throw ChainError.refusal('no_balance', `the wallet holds none of ${tokens.mint.toBase58()}`, { mint: tokens.mint.toBase58() });
    if (held < tokens.raw) {
      throw ChainError.refusal('insufficient', `the wallet holds ${rawToUi(held, tokens.decimals)} of ${tokens.mint.toBase58()}; this needs ${rawToUi(tokens.raw, tokens.decimals)}`, {
        needed: rawToUi(tokens.raw, tokens.decimals),
        available: rawToUi(held, tokens.decimals),
      });
    }
  }
  await assertCanPay(connection, wallet as WalletAddress, { lamports: funds.lamports + opening, fee, balance: funds.balance });
}

/** The rent of the accounts among `opens` that do not exist yet. */
async function openingRent(connection: Connection, opens: Array<{ address?: PublicKey; bytes: number }>): Promise<bigint> {
  if (opens.length === 0) return 0n;
  const named = opens.filter((o) => o.address !== undefined);
  const existing = named.length === 0 ? [] : await connection.getMultipleAccountsInfo(named.map((o) => o.address!), 'confirmed');
  const missing = opens.filter((o) => o.address === undefined || existing[named.indexOf(o)] === null);
  const rents = await Promise.all(missing.map((o) => connection.getMinimumBalanceForRentExemption(o.bytes, 'confirmed')));
  return rents.reduce((sum, rent) => sum + BigInt(rent), 0n);
}
