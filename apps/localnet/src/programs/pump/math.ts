import { NATIVE_MINT, NATIVE_MINT_2022 } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import type { BondingCurve, FeeConfig, Fees, FeeTier, Global } from './state';

/**
 * Bonding-curve and fee arithmetic of the pump program, in bigint, rounding exactly where the program
 * (and the SDK's quoting helpers) round. Pure: the instructions feed it decoded accounts.
 */

export const BPS = 10_000n;
/** Non-mayhem curves price their fee tier as if the supply were exactly one billion tokens. */
export const ONE_BILLION_SUPPLY = 1_000_000_000_000_000n;

const SOL_LIKE_QUOTE_MINTS = [PublicKey.default, NATIVE_MINT, NATIVE_MINT_2022];
const STABLE_QUOTE_MINTS = [new PublicKey('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v')];

export const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/** A fee of `bps` on `amount`, rounded up so the protocol never loses a lamport to rounding. */
export const feeOf = (amount: bigint, bps: bigint): bigint => ceilDiv(amount * bps, BPS);

export const bigMin = (a: bigint, b: bigint): bigint => (a < b ? a : b);

export function curveMarketCap(curve: Pick<BondingCurve, 'virtualQuoteReserves' | 'virtualTokenReserves'>, mintSupply: bigint): bigint {
  if (curve.virtualTokenReserves === 0n) throw new RangeError('market cap of a curve without virtual token reserves');
  return (curve.virtualQuoteReserves * mintSupply) / curve.virtualTokenReserves;
}

/** pump-fees `calculate_fee_tier`: the highest tier whose threshold the market cap reaches, else the first. */
export function feeTierFor(tiers: readonly FeeTier[], marketCap: bigint): Fees {
  if (tiers.length === 0) throw new RangeError('fee tiers cannot be empty');
  for (let i = tiers.length - 1; i >= 0; i--) if (marketCap >= tiers[i].marketCapLamportsThreshold) return tiers[i].fees;
  return tiers[0].fees;
}

/** pump-fees `fees_for_quote_mint` for a canonical curve: SOL tiers, stable tiers, else the exotic (or flat) fees. */
export function curveFeeSchedule(feeConfig: FeeConfig, quoteMint: PublicKey, marketCap: bigint): Fees {
  if (SOL_LIKE_QUOTE_MINTS.some((m) => m.equals(quoteMint))) return feeTierFor(feeConfig.feeTiers, marketCap);
  if (STABLE_QUOTE_MINTS.some((m) => m.equals(quoteMint))) {
    return feeTierFor(feeConfig.stableFeeTiers.length > 0 ? feeConfig.stableFeeTiers : feeConfig.feeTiers, marketCap);
  }
  const exotic = feeConfig.exoticFlatFees;
  const unset = exotic.lpFeeBps === 0n && exotic.protocolFeeBps === 0n && exotic.creatorFeeBps === 0n;
  return unset ? feeConfig.flatFees : exotic;
}

export interface FeeRates {
  protocolFeeBps: bigint;
  creatorFeeBps: bigint;
}

/**
 * The rates a trade on `curve` pays, from its pre-trade reserves. `mintSupply` is the supply the tier is
 * priced with (see `feeSupply`). A curve's own creator rate replaces the schedule's while Global allows it.
 */
export function curveFeeRates(global: Global, feeConfig: FeeConfig | null, curve: BondingCurve, mintSupply: bigint): FeeRates {
  const schedule: FeeRates = feeConfig
    ? curveFeeSchedule(feeConfig, curve.quoteMint, curveMarketCap(curve, mintSupply))
    : { protocolFeeBps: global.feeBasisPoints, creatorFeeBps: global.creatorFeeBasisPoints };
  const creatorFeeBps = global.creatorFeeConfigurable && curve.creatorFeeBps !== 0n ? curve.creatorFeeBps : schedule.creatorFeeBps;
  return { protocolFeeBps: schedule.protocolFeeBps, creatorFeeBps };
}

export const feeSupply = (curve: BondingCurve, mintSupply: bigint): bigint => (curve.isMayhemMode ? mintSupply : ONE_BILLION_SUPPLY);

/** A curve without a creator (legacy coins before creator fees) pays no creator fee. */
export const chargesCreatorFee = (curve: BondingCurve): boolean => !curve.creator.equals(PublicKey.default);

export interface TradeFees {
  protocolFee: bigint;
  creatorFee: bigint;
}

export function tradeFees(amount: bigint, rates: FeeRates, chargesCreator: boolean): TradeFees {
  return { protocolFee: feeOf(amount, rates.protocolFeeBps), creatorFee: chargesCreator ? feeOf(amount, rates.creatorFeeBps) : 0n };
}

/** SOL into the curve for `tokenAmount` tokens out (fees excluded); the +1 keeps k from ever shrinking. */
export function buyCost(curve: BondingCurve, tokenAmount: bigint): bigint {
  return (tokenAmount * curve.virtualQuoteReserves) / (curve.virtualTokenReserves - tokenAmount) + 1n;
}

/** SOL out of the curve for `tokenAmount` tokens in (fees excluded). */
export function sellProceeds(curve: BondingCurve, tokenAmount: bigint): bigint {
  return (tokenAmount * curve.virtualQuoteReserves) / (curve.virtualTokenReserves + tokenAmount);
}

/**
 * The quote a client makes for a `buy` worth `spend` lamports including fees (the SDK's
 * `getBuyTokenAmountFromSolAmount` on an existing curve).
 */
export function buyTokensForSolQuote(curve: BondingCurve, rates: FeeRates, spend: bigint): bigint {
  if (spend === 0n || curve.virtualTokenReserves === 0n) return 0n;
  const totalBps = rates.protocolFeeBps + (chargesCreatorFee(curve) ? rates.creatorFeeBps : 0n);
  const input = ((spend - 1n) * BPS) / (totalBps + BPS);
  const tokens = (input * curve.virtualTokenReserves) / (curve.virtualQuoteReserves + input);
  return bigMin(tokens, curve.realTokenReserves);
}

/**
 * `buy_exact_sol_in`'s token amount for a budget of `spendable` lamports, by the quote formulas the
 * instruction's IDL documents: net SOL after fees, trimmed until net + fees fit the budget, then tokens for
 * net - 1 so that the ordinary buy price of those tokens (which adds 1) never exceeds net.
 */
export function buyExactSolInTokens(curve: BondingCurve, rates: FeeRates, spendable: bigint): bigint {
  const chargesCreator = chargesCreatorFee(curve);
  const totalBps = rates.protocolFeeBps + (chargesCreator ? rates.creatorFeeBps : 0n);
  let net = (spendable * BPS) / (BPS + totalBps);
  const fees = tradeFees(net, rates, chargesCreator);
  const total = net + fees.protocolFee + fees.creatorFee;
  if (total > spendable) net -= total - spendable;
  if (net <= 1n) return 0n;
  const tokens = ((net - 1n) * curve.virtualTokenReserves) / (curve.virtualQuoteReserves + net - 1n);
  return bigMin(tokens, curve.realTokenReserves);
}

export function afterBuy(curve: BondingCurve, tokenAmount: bigint, solAmount: bigint): BondingCurve {
  const realTokenReserves = curve.realTokenReserves - tokenAmount;
  return {
    ...curve,
    virtualTokenReserves: curve.virtualTokenReserves - tokenAmount,
    realTokenReserves,
    virtualQuoteReserves: curve.virtualQuoteReserves + solAmount,
    realQuoteReserves: curve.realQuoteReserves + solAmount,
    complete: curve.complete || realTokenReserves === 0n,
  };
}

export function afterSell(curve: BondingCurve, tokenAmount: bigint, solAmount: bigint): BondingCurve {
  return {
    ...curve,
    virtualTokenReserves: curve.virtualTokenReserves + tokenAmount,
    realTokenReserves: curve.realTokenReserves + tokenAmount,
    virtualQuoteReserves: curve.virtualQuoteReserves - solAmount,
    realQuoteReserves: curve.realQuoteReserves - solAmount,
  };
}
