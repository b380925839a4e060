import BN from 'bn.js';
import { PublicKey } from '@solana/web3.js';
import { computeFeesBps as curveFeesBps, getBuySolAmountFromTokenAmount, getSellSolAmountFromTokenAmount } from '@pump-fun/pump-sdk';
import { buyQuoteInput, computeFeesBps as poolFeesBps, sellBaseInput } from '@pump-fun/pump-swap-sdk';
import { JupiterError } from './errors';
import { CurveVenue, PoolVenue, SOL_MINT, Venue } from './venues';

/**
 * What one ExactIn swap on a venue moves, priced with the venue SDKs' math on the state the chain holds now, so
 * the numbers are the ones the emulated program will execute. Buys are the "exact input" instructions
 * (`buy_exact_sol_in`, `buy_exact_quote_in`), whose output is what these formulas give.
 */
export interface Fill {
  inAmount: bigint;
  outAmount: bigint;
  feeAmount: bigint;
  feeMint: PublicKey;
  /** Output lost to the curve's shape, before fees: 1 − out / (in × spot price). */
  priceImpact: number;
}

const BPS = 10_000n;
/** pump prices the fee tier of a non-mayhem curve as if the supply were one billion tokens. */
const ONE_BILLION_SUPPLY = new BN('1000000000000000');

const big = (n: BN) => BigInt(n.toString());
const bn = (n: bigint) => new BN(n.toString());
const feeOf = (amount: bigint, bps: bigint) => (amount * bps + BPS - 1n) / BPS;
const impact = (out: bigint, spotOut: number) => (spotOut > 0 ? Math.max(0, 1 - Number(out) / spotOut) : 0);

const noLiquidity = (detail: string) => new JupiterError(400, 'ROUTE_PLAN_DOES_NOT_CONSUME_ALL_THE_AMOUNT', `Not enough liquidity: ${detail}`);
const tooSmall = () => new JupiterError(400, 'COULD_NOT_FIND_ANY_ROUTE', 'Could not find any route: the amount is too small to trade');

export function fillExactIn(venue: Venue, inputMint: PublicKey, amount: bigint): Fill {
  switch (venue.kind) {
    case 'curve':
      return inputMint.equals(SOL_MINT) ? curveBuy(venue, amount) : curveSell(venue, amount);
    case 'pool':
      return inputMint.equals(venue.pool.quoteMint) ? poolBuy(venue, amount) : poolSell(venue, amount);
    default:
      throw new Error(`unknown venue ${(venue satisfies never) as unknown}`);
  }
}

function curveState(venue: CurveVenue) {
  const { curve, global, feeConfig } = venue;
  const mintSupply = new BN(venue.mint.raw.supply.toString());
  return { curve, global, feeConfig, mintSupply, vT: big(curve.virtualTokenReserves), vQ: big(curve.virtualQuoteReserves) };
}

/** `buy_exact_sol_in`, by the quote formulas its IDL documents (the SDK has no helper for it). */
function curveBuy(venue: CurveVenue, spendable: bigint): Fill {
  const { curve, global, feeConfig, mintSupply, vT, vQ } = curveState(venue);
  const rates = curveFeesBps({
    global,
    feeConfig,
    mintSupply: curve.isMayhemMode ? mintSupply : ONE_BILLION_SUPPLY,
    virtualQuoteReserves: curve.virtualQuoteReserves,
    virtualTokenReserves: curve.virtualTokenReserves,
    quoteMint: curve.quoteMint,
    creatorFeeBps: curve.creatorFeeBps,
  });
  const chargesCreator = !curve.creator.equals(PublicKey.default);
  const protocolBps = big(rates.protocolFeeBps);
  const creatorBps = chargesCreator ? big(rates.creatorFeeBps) : 0n;
  let net = (spendable * BPS) / (BPS + protocolBps + creatorBps);
  const total = net + feeOf(net, protocolBps) + feeOf(net, creatorBps);
  if (total > spendable) net -= total - spendable;
  if (net <= 1n) throw tooSmall();
  const tokens = ((net - 1n) * vT) / (vQ + net - 1n);
  if (tokens === 0n) throw tooSmall();
  if (tokens > big(curve.realTokenReserves)) throw noLiquidity('the bonding curve has fewer tokens left than this buys');
  const solIntoCurve = (tokens * vQ) / (vT - tokens) + 1n;
  const spent = big(getBuySolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve: curve, amount: bn(tokens), quoteMint: SOL_MINT }));
  return {
    inAmount: spendable,
    outAmount: tokens,
    feeAmount: spent - solIntoCurve,
    feeMint: SOL_MINT,
    priceImpact: impact(tokens, (Number(solIntoCurve) * Number(vT)) / Number(vQ)),
  };
}

function curveSell(venue: CurveVenue, tokens: bigint): Fill {
  const { curve, global, feeConfig, mintSupply, vT, vQ } = curveState(venue);
  const solOutOfCurve = (tokens * vQ) / (vT + tokens);
  if (solOutOfCurve > big(curve.realQuoteReserves)) throw noLiquidity('the bonding curve holds less SOL than this sells for');
  const out = big(getSellSolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve: curve, amount: bn(tokens) }));
  if (out <= 0n) throw tooSmall();
  return {
    inAmount: tokens,
    outAmount: out,
    feeAmount: solOutOfCurve - out,
    feeMint: SOL_MINT,
    priceImpact: impact(solOutOfCurve, (Number(tokens) * Number(vQ)) / Number(vT)),
  };
}

function poolInputs(venue: PoolVenue) {
  const { pool } = venue;
  return {
    baseReserve: venue.baseReserve,
    quoteReserve: venue.quoteReserve,
    virtualQuoteReserves: pool.virtualQuoteReserves,
    globalConfig: venue.globalConfig,
    baseMintAccount: venue.base.raw,
    baseMint: pool.baseMint,
    coinCreator: pool.coinCreator,
    creator: pool.creator,
    feeConfig: venue.feeConfig,
    quoteMint: pool.quoteMint,
    isMayhemMode: pool.isMayhemMode,
    creatorFeeBps: pool.creatorFeeBps,
  };
}

/** Spend quote for base: `buy_exact_quote_in`, which the SDK's `buyQuoteInput` prices. */
function poolBuy(venue: PoolVenue, spendable: bigint): Fill {
  const inputs = poolInputs(venue);
  const quoted = buyQuoteInput({ ...inputs, quote: bn(spendable), slippage: 0 });
  const quoteIn = big(quoted.internalQuoteWithoutFees);
  const baseOut = big(quoted.base);
  if (quoteIn <= 1n || baseOut <= 0n) throw tooSmall();
  if (baseOut >= big(venue.baseReserve)) throw noLiquidity('the pool holds fewer tokens than this buys');
  const effectiveQuoteReserve = venue.quoteReserve.add(inputs.virtualQuoteReserves);
  const rates = poolFeesBps({
    globalConfig: inputs.globalConfig,
    feeConfig: inputs.feeConfig,
    creator: inputs.creator,
    baseMintSupply: new BN(inputs.baseMintAccount.supply.toString()),
    baseMint: inputs.baseMint,
    baseReserve: inputs.baseReserve,
    quoteReserve: effectiveQuoteReserve,
    quoteMint: inputs.quoteMint,
    isMayhemMode: inputs.isMayhemMode,
    creatorFeeBps: inputs.creatorFeeBps,
  });
  const creatorBps = venue.pool.coinCreator.equals(PublicKey.default) ? 0n : big(rates.creatorFeeBps);
  const fees = feeOf(quoteIn, big(rates.lpFeeBps)) + feeOf(quoteIn, big(rates.protocolFeeBps)) + feeOf(quoteIn, creatorBps);
  return {
    inAmount: spendable,
    outAmount: baseOut,
    feeAmount: fees,
    feeMint: venue.pool.quoteMint,
    priceImpact: impact(baseOut, (Number(quoteIn) * Number(venue.baseReserve.toString())) / Number(effectiveQuoteReserve.toString())),
  };
}

/** Sell base for quote: `sell`, which the SDK's `sellBaseInput` prices. */
function poolSell(venue: PoolVenue, baseIn: bigint): Fill {
  const inputs = poolInputs(venue);
  let quoted: ReturnType<typeof sellBaseInput>;
  try {
    quoted = sellBaseInput({ ...inputs, base: bn(baseIn), slippage: 0 });
  } catch (error) {
    throw noLiquidity((error as Error).message);
  }
  const out = big(quoted.uiQuote);
  if (out <= 0n) throw tooSmall();
  const gross = big(quoted.internalQuoteAmountOut);
  const effectiveQuoteReserve = Number(venue.quoteReserve.add(inputs.virtualQuoteReserves).toString());
  return {
    inAmount: baseIn,
    outAmount: out,
    feeAmount: gross - out,
    feeMint: venue.pool.quoteMint,
    priceImpact: impact(gross, (Number(baseIn) * effectiveQuoteReserve) / Number(venue.baseReserve.toString())),
  };
}
