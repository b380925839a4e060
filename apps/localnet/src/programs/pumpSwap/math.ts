import { PublicKey } from '@solana/web3.js';

/**
 * PumpSwap's constant-product pricing and fee schedule, in bigint. Every rounding mirrors the program (and the swap
 * SDK's `buyBaseInput` / `buyQuoteInput` / `sellBaseInput`), so a quote the SDK shows is what a trade moves.
 */

// One FeeConfig layout (the fees program's) serves the curve and the pools.
import type { Fees, FeeTier } from '../pump/state';
export type { Fees, FeeTier };

export interface FeeSchedule {
  flatFees: Fees;
  feeTiers: FeeTier[];
  stableFeeTiers: FeeTier[];
  exoticFlatFees: Fees;
}

const BPS = 10_000n;
const NATIVE_MINT = new PublicKey('So11111111111111111111111111111111111111112');
const NATIVE_MINT_2022 = new PublicKey('9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP');
const USDC_MINT = new PublicKey('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
/** Mayhem pools price market cap on this fixed supply instead of the live mint supply. */
const MAYHEM_TOTAL_SUPPLY = 1_000_000_000_000_000n;

export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

export function fee(amount: bigint, bps: bigint): bigint {
  return ceilDiv(amount * bps, BPS);
}

export function isSolLikeQuoteMint(mint: PublicKey): boolean {
  return mint.equals(PublicKey.default) || mint.equals(NATIVE_MINT) || mint.equals(NATIVE_MINT_2022);
}

const isZeroFees = (f: Fees) => f.lpFeeBps === 0n && f.protocolFeeBps === 0n && f.creatorFeeBps === 0n;

export function feeTierFor(tiers: readonly FeeTier[], marketCap: bigint): Fees {
  const first = tiers[0];
  if (!first) throw new Error('fee tiers are empty');
  if (marketCap < first.marketCapLamportsThreshold) return first.fees;
  for (let i = tiers.length - 1; i >= 0; i--) if (marketCap >= tiers[i]!.marketCapLamportsThreshold) return tiers[i]!.fees;
  return first.fees;
}

export interface FeeInputs {
  schedule: FeeSchedule | null;
  /** GlobalConfig rates, charged only when no fee schedule exists. */
  globalFees: Fees;
  pumpPool: boolean;
  quoteMint: PublicKey;
  baseMintSupply: bigint;
  baseReserve: bigint;
  /** Real plus virtual quote reserves. */
  quoteReserve: bigint;
  isMayhemMode: boolean;
  /** Per-pool creator rate, applied while the GlobalConfig gate is on and it is nonzero. */
  poolCreatorFeeBps: bigint;
  creatorFeeConfigurable: boolean;
}

export function tradeFees(input: FeeInputs): Fees {
  const { schedule } = input;
  if (!schedule) return input.globalFees;
  const supply = input.isMayhemMode ? MAYHEM_TOTAL_SUPPLY : input.baseMintSupply;
  const marketCap = (input.quoteReserve * supply) / input.baseReserve;
  let fees: Fees;
  if (!input.pumpPool) fees = schedule.flatFees;
  else if (isSolLikeQuoteMint(input.quoteMint)) fees = feeTierFor(schedule.feeTiers, marketCap);
  else if (input.quoteMint.equals(USDC_MINT)) fees = feeTierFor(schedule.stableFeeTiers.length > 0 ? schedule.stableFeeTiers : schedule.feeTiers, marketCap);
  else fees = isZeroFees(schedule.exoticFlatFees) ? schedule.flatFees : schedule.exoticFlatFees;
  return input.creatorFeeConfigurable && input.poolCreatorFeeBps > 0n ? { ...fees, creatorFeeBps: input.poolCreatorFeeBps } : fees;
}

export interface Reserves {
  base: bigint;
  /** Real quote in the pool's token account. */
  quote: bigint;
  virtualQuote: bigint;
}

export interface FeeAmounts {
  lpFee: bigint;
  protocolFee: bigint;
  coinCreatorFee: bigint;
}

function feeAmounts(amount: bigint, fees: Fees, hasCoinCreator: boolean): FeeAmounts {
  return {
    lpFee: fee(amount, fees.lpFeeBps),
    protocolFee: fee(amount, fees.protocolFeeBps),
    coinCreatorFee: hasCoinCreator ? fee(amount, fees.creatorFeeBps) : 0n,
  };
}

export interface BuyQuote extends FeeAmounts {
  baseOut: bigint;
  /** Quote that moves the curve, before fees. */
  quoteIn: bigint;
  /** What the user pays: quoteIn plus every fee. */
  userQuoteIn: bigint;
}

export type PoolMathError = 'ZeroBaseAmount' | 'BuyMoreBaseAmountThanPoolReserves' | 'BuyNotEnoughQuoteTokensToCoverFees' | 'InsufficientRealQuoteReserves' | 'Overflow';

export type Priced<T> = { ok: true; value: T } | { ok: false; error: PoolMathError };

/** `buy`: exactly `baseOut` base for quote_in = ceil(Q·b / (B − b)), fees on top. */
export function buyExactBaseOut(baseOut: bigint, r: Reserves, fees: Fees, hasCoinCreator: boolean): Priced<BuyQuote> {
  if (baseOut === 0n) return { ok: false, error: 'ZeroBaseAmount' };
  if (baseOut >= r.base) return { ok: false, error: 'BuyMoreBaseAmountThanPoolReserves' };
  const quoteIn = ceilDiv((r.quote + r.virtualQuote) * baseOut, r.base - baseOut);
  const f = feeAmounts(quoteIn, fees, hasCoinCreator);
  return { ok: true, value: { baseOut, quoteIn, ...f, userQuoteIn: quoteIn + f.lpFee + f.protocolFee + f.coinCreatorFee } };
}

/**
 * `buy_exact_quote_in`: the largest curve input whose fees still fit in `spendable`, then
 * base_out = floor(B·(q − 1) / (Q + q − 1)), the one-unit haircut keeping the pool on the safe side of rounding.
 */
export function buyExactQuoteIn(spendable: bigint, r: Reserves, fees: Fees, hasCoinCreator: boolean): Priced<BuyQuote> {
  const totalBps = fees.lpFeeBps + fees.protocolFeeBps + (hasCoinCreator ? fees.creatorFeeBps : 0n);
  let quoteIn = (spendable * BPS) / (BPS + totalBps);
  const first = feeAmounts(quoteIn, fees, hasCoinCreator);
  const withFees = quoteIn + first.lpFee + first.protocolFee + first.coinCreatorFee;
  if (withFees > spendable) quoteIn -= withFees - spendable;
  if (quoteIn <= 1n) return { ok: false, error: 'BuyNotEnoughQuoteTokensToCoverFees' };
  const input = quoteIn - 1n;
  const baseOut = (r.base * input) / (r.quote + r.virtualQuote + input);
  if (baseOut === 0n) return { ok: false, error: 'ZeroBaseAmount' };
  const f = feeAmounts(quoteIn, fees, hasCoinCreator);
  return { ok: true, value: { baseOut, quoteIn, ...f, userQuoteIn: quoteIn + f.lpFee + f.protocolFee + f.coinCreatorFee } };
}

export interface SellQuote extends FeeAmounts {
  baseIn: bigint;
  /** Quote the curve releases, before fees. */
  quoteOut: bigint;
  /** What the user receives: quoteOut minus every fee. */
  userQuoteOut: bigint;
}

/** `sell`: quote_out = floor(Q·b / (B + b)), fees taken from it; the LP fee stays in the pool. */
export function sellExactBaseIn(baseIn: bigint, r: Reserves, fees: Fees, hasCoinCreator: boolean): Priced<SellQuote> {
  if (baseIn === 0n) return { ok: false, error: 'ZeroBaseAmount' };
  const quoteOut = ((r.quote + r.virtualQuote) * baseIn) / (r.base + baseIn);
  const f = feeAmounts(quoteOut, fees, hasCoinCreator);
  if (r.quote < quoteOut - f.lpFee) return { ok: false, error: 'InsufficientRealQuoteReserves' };
  const userQuoteOut = quoteOut - f.lpFee - f.protocolFee - f.coinCreatorFee;
  if (userQuoteOut < 0n) return { ok: false, error: 'Overflow' };
  return { ok: true, value: { baseIn, quoteOut, ...f, userQuoteOut } };
}

/** Liquidity minted by `create_pool`: floor(sqrt(base · quote)). */
export function initialLiquidity(base: bigint, quote: bigint): bigint {
  return isqrt(base * quote);
}

export function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  while (x * x > n) x--;
  while ((x + 1n) * (x + 1n) <= n) x++;
  return x;
}

/** Locked out of the creator's LP at pool creation (never minted), so the pool can never be drained to zero. */
export const MINIMUM_LIQUIDITY = 1_000n;
