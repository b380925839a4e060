import { ComputeBudgetProgram, type AddressLookupTableAccount, type PublicKey, type TransactionInstruction } from '@solana/web3.js';
import type { RawMint } from '@solana/spl-token';
import type { BondingCurve } from '@pump-fun/pump-sdk';
import type { AggregatorQuote } from './aggregator';

export type VenueName = 'pump' | 'pump-amm' | 'jupiter';
export type TradeSide = 'buy' | 'sell';

/**
 * Where a mint stands in pump's life: `bonding` on its curve, `graduating` with its curve complete and its PumpSwap
 * pool not created yet, `graduated` moved off its curve (into its pool, or elsewhere), `listed` never on pump.
 */
export type MarketStatus = 'bonding' | 'graduating' | 'graduated' | 'listed';

/** A complete curve that still holds its reserves: `migrate` zeroes them as it moves the curve into its pool. */
export function awaitsMigration(curve: Pick<BondingCurve, 'complete' | 'virtualTokenReserves'>): boolean {
  return curve.complete && !curve.virtualTokenReserves.isZero();
}

/** The status a market's stored figures say: its venue, whether its curve is complete, whether it has a curve at all. */
export function marketStatus(venue: VenueName, complete: boolean, hasCurve: boolean): MarketStatus {
  switch (venue) {
    case 'pump':
      return complete ? 'graduating' : 'bonding';
    case 'pump-amm':
      return 'graduated';
    case 'jupiter':
      return hasCurve && complete ? 'graduated' : 'listed';
    default: {
      const never: never = venue;
      return never;
    }
  }
}

/** A mint as the chain holds it now. */
export interface MintState {
  address: PublicKey;
  tokenProgram: PublicKey;
  decimals: number;
  supply: bigint;
  /** The mint's base layout decoded, which the PumpSwap SDK prices with. */
  raw: RawMint;
}

/** A trade priced on its venue: what goes in, what comes out, and the floor the transaction enforces on-chain. */
export interface TradeQuote {
  venue: VenueName;
  /** Plain words naming the route, e.g. "pump bonding curve (buy_exact_sol_in)". */
  route: string;
  side: TradeSide;
  mint: string;
  /** Lamports for a buy, token base units for a sell. */
  inRaw: bigint;
  /** Token base units for a buy, lamports for a sell. */
  outRaw: bigint;
  minOutRaw: bigint;
  slippageBps: number;
  /** Lamports of venue fees (protocol, creator, LP) inside the trade. */
  feeLamports: bigint;
  priceImpactPct: number;
  /** The aggregator's own quote, which its swap call needs back. */
  aggregator?: AggregatorQuote;
}

export interface TradeBuild {
  instructions: TransactionInstruction[];
  lookupTables?: AddressLookupTableAccount[];
}

export interface TradeOptions {
  priorityLamports: bigint;
  /** Close the user's token account after a sell of everything it holds, returning its rent. */
  closeAccount?: boolean;
}

/**
 * Where a mint trades right now, read from the chain once (`readMarket` picks which): it prices a trade with
 * its own math and builds the instructions that carry the quote out, with the floor enforced on-chain.
 */
export interface Venue {
  readonly name: VenueName;
  readonly mint: MintState;
  /** The SOL of the user the market was read for, read in the same batch. */
  readonly userLamports: bigint;
  /** The pump bonding curve the coin is on or graduated from, when it has one. */
  readonly curve: BondingCurve | null;
  /** Prices a buy (`amount` in lamports) or a sell (`amount` in token base units). */
  quote(side: TradeSide, amount: bigint, slippageBps: number): Promise<TradeQuote>;
  build(quote: TradeQuote, user: PublicKey, options: TradeOptions): Promise<TradeBuild>;
  /** Rent a buy puts into accounts it opens for the user (its token account, volume accumulators), when it opens any. */
  openingRent(): bigint;
}

const BPS = 10_000n;

export function minOut(out: bigint, slippageBps: number): bigint {
  return (out * (BPS - BigInt(slippageBps))) / BPS;
}

/** A compute-unit limit and the price that makes `priorityLamports` the whole priority fee at that limit. */
export function priorityInstructions(priorityLamports: bigint, units: number): TransactionInstruction[] {
  const microLamports = (priorityLamports * 1_000_000n) / BigInt(units);
  return [ComputeBudgetProgram.setComputeUnitLimit({ units }), ComputeBudgetProgram.setComputeUnitPrice({ microLamports })];
}

/** Compute units a venue trade is given: enough for the account creations a first trade makes. */
export const TRADE_UNITS = 300_000;

/** Rent of the accounts a first trade may open (token account, volume accumulator): checked before sending. */
export const FIRST_TRADE_RENT = 4_000_000n;

/** The percentage by which `out` falls short of what the spot price would give. */
export const impactPct = (out: bigint, spotOut: number) => (spotOut > 0 ? Math.max(0, (1 - Number(out) / spotOut) * 100) : 0);
