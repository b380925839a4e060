import BN from 'bn.js';
import { ComputeBudgetProgram, PublicKey, TransactionInstruction, type AddressLookupTableAccount, type Connection } from '@solana/web3.js';
import { createCloseAccountInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import {
  PUMP_PROGRAM_ID,
  PUMP_SDK,
  getBuySolAmountFromTokenAmount,
  getBuyTokenAmountFromSolAmount,
  getSellSolAmountFromTokenAmount,
  getPumpProgram,
  pumpIdl,
  type BondingCurve,
} from '@pump-fun/pump-sdk';
import { OFFLINE_PUMP_AMM_PROGRAM, PUMP_AMM_PROGRAM_ID, PUMP_AMM_SDK, buyQuoteInput, sellBaseInput } from '@pump-fun/pump-swap-sdk';
import { Rejected } from '@svc/domain';
import { Aggregator, type AggregatorQuote } from './aggregator';
import { SOL_MINT, type CurveMarket, type Market, type PoolMarket, type VenueName } from './market';

export type TradeSide = 'buy' | 'sell';

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

const BPS = 10_000n;
/** pump prices the fee tier of a coin that is not in mayhem mode as if its supply were one billion tokens. */
const ONE_BILLION_SUPPLY = new BN('1000000000000000');

const big = (n: BN) => BigInt(n.toString());
const bn = (n: bigint) => new BN(n.toString());
const impactPct = (out: bigint, spotOut: number) => (spotOut > 0 ? Math.max(0, (1 - Number(out) / spotOut) * 100) : 0);

export function minOut(out: bigint, slippageBps: number): bigint {
  return (out * (BPS - BigInt(slippageBps))) / BPS;
}

const tooSmall = (what: string) => new Rejected('invalid_request', `the amount is too small to trade: ${what}`, { field: 'amount' });

function curveInputs(market: CurveMarket) {
  const { curve, global, feeConfig } = market;
  return { global, feeConfig, bondingCurve: curve, mintSupply: curve.isMayhemMode ? bn(market.mint.supply) : ONE_BILLION_SUPPLY };
}

/** What `buy_exact_sol_in` with `spend` lamports yields, by the SDK's own math (getBuyTokenAmountFromSolAmount). */
export function curveBuyQuote(market: CurveMarket, spend: bigint, slippageBps: number): TradeQuote {
  const inputs = curveInputs(market);
  const { curve } = market;
  let out = big(getBuyTokenAmountFromSolAmount({ ...inputs, amount: bn(spend), quoteMint: SOL_MINT }));
  out = out < big(curve.realTokenReserves) ? out : big(curve.realTokenReserves);
  if (out <= 0n) throw tooSmall('it does not cover the venue fees');
  const vT = big(curve.virtualTokenReserves);
  const vQ = big(curve.virtualQuoteReserves);
  const intoCurve = (out * vQ) / (vT - out) + 1n;
  const cost = big(getBuySolAmountFromTokenAmount({ ...inputs, amount: bn(out), quoteMint: SOL_MINT }));
  return {
    venue: 'pump',
    route: 'pump bonding curve: buy_exact_sol_in',
    side: 'buy',
    mint: market.mint.address.toBase58(),
    inRaw: spend,
    outRaw: out,
    minOutRaw: minOut(out, slippageBps),
    slippageBps,
    feeLamports: cost > intoCurve ? cost - intoCurve : 0n,
    priceImpactPct: impactPct(out, (Number(intoCurve) * Number(vT)) / Number(vQ)),
  };
}

/** What selling `tokens` on the curve returns, by the SDK's getSellSolAmountFromTokenAmount. */
export function curveSellQuote(market: CurveMarket, tokens: bigint, slippageBps: number): TradeQuote {
  const { curve } = market;
  const vT = big(curve.virtualTokenReserves);
  const vQ = big(curve.virtualQuoteReserves);
  const gross = (tokens * vQ) / (vT + tokens);
  if (gross > big(curve.realQuoteReserves)) throw new Rejected('invalid_request', 'the bonding curve holds less SOL than this sells for', { field: 'amount' });
  const out = big(getSellSolAmountFromTokenAmount({ ...curveInputs(market), amount: bn(tokens) }));
  if (out <= 0n) throw tooSmall('it sells for nothing after fees');
  return {
    venue: 'pump',
    route: 'pump bonding curve: sell',
    side: 'sell',
    mint: market.mint.address.toBase58(),
    inRaw: tokens,
    outRaw: out,
    minOutRaw: minOut(out, slippageBps),
    slippageBps,
    feeLamports: gross - out,
    priceImpactPct: impactPct(gross, (Number(tokens) * Number(vQ)) / Number(vT)),
  };
}

function poolInputs(market: PoolMarket) {
  const s = market.state;
  return {
    slippage: 0,
    baseReserve: s.poolBaseAmount,
    quoteReserve: s.poolQuoteAmount,
    virtualQuoteReserves: s.pool.virtualQuoteReserves,
    globalConfig: s.globalConfig,
    baseMintAccount: s.baseMintAccount,
    baseMint: s.baseMint,
    coinCreator: s.pool.coinCreator,
    creator: s.pool.creator,
    feeConfig: s.feeConfig,
    quoteMint: s.pool.quoteMint,
    isMayhemMode: s.pool.isMayhemMode,
    creatorFeeBps: s.pool.creatorFeeBps,
  };
}

const effectiveQuote = (market: PoolMarket) => Number(market.state.poolQuoteAmount.add(market.state.pool.virtualQuoteReserves ?? new BN(0)).toString());

/** What `buy_exact_quote_in` with `spend` lamports yields on the pool, by the swap SDK's buyQuoteInput. */
export function poolBuyQuote(market: PoolMarket, spend: bigint, slippageBps: number): TradeQuote {
  const quoted = buyQuoteInput({ ...poolInputs(market), quote: bn(spend) });
  const out = big(quoted.base);
  const net = big(quoted.internalQuoteWithoutFees);
  if (out <= 0n || net <= 1n) throw tooSmall('it does not cover the pool fees');
  if (out >= big(market.state.poolBaseAmount)) throw new Rejected('invalid_request', 'the pool holds fewer tokens than this buys', { field: 'amount_sol' });
  return {
    venue: 'pump-amm',
    route: 'PumpSwap pool: buy_exact_quote_in',
    side: 'buy',
    mint: market.mint.address.toBase58(),
    inRaw: spend,
    outRaw: out,
    minOutRaw: minOut(out, slippageBps),
    slippageBps,
    feeLamports: spend > net ? spend - net : 0n,
    priceImpactPct: impactPct(out, (Number(net) * Number(market.state.poolBaseAmount.toString())) / effectiveQuote(market)),
  };
}

/** What selling `tokens` into the pool returns, by the swap SDK's sellBaseInput. */
export function poolSellQuote(market: PoolMarket, tokens: bigint, slippageBps: number): TradeQuote {
  let quoted: ReturnType<typeof sellBaseInput>;
  try {
    quoted = sellBaseInput({ ...poolInputs(market), base: bn(tokens) });
  } catch (error) {
    throw new Rejected('invalid_request', `the pool cannot take this sell: ${(error as Error).message}`, { field: 'amount' });
  }
  const out = big(quoted.uiQuote);
  if (out <= 0n) throw tooSmall('it sells for nothing after fees');
  const gross = big(quoted.internalQuoteAmountOut);
  return {
    venue: 'pump-amm',
    route: 'PumpSwap pool: sell',
    side: 'sell',
    mint: market.mint.address.toBase58(),
    inRaw: tokens,
    outRaw: out,
    minOutRaw: minOut(out, slippageBps),
    slippageBps,
    feeLamports: gross > out ? gross - out : 0n,
    priceImpactPct: impactPct(gross, (Number(tokens) * effectiveQuote(market)) / Number(market.state.poolBaseAmount.toString())),
  };
}

/** A quote from the aggregator, for a mint neither pump venue trades. */
export async function aggregatorQuote(aggregator: Aggregator, market: Market, side: TradeSide, amount: bigint, slippageBps: number): Promise<TradeQuote> {
  const mint = market.mint.address;
  const [input, output] = side === 'buy' ? [SOL_MINT, mint] : [mint, SOL_MINT];
  const quote = await aggregator.quote(input, output, amount, slippageBps);
  const fee = quote.routePlan.reduce((sum, step) => sum + (step.swapInfo.feeMint === SOL_MINT.toBase58() ? BigInt(step.swapInfo.feeAmount) : 0n), 0n);
  return {
    venue: 'jupiter',
    route: `aggregator: ${quote.routePlan.map((step) => step.swapInfo.label ?? step.swapInfo.ammKey).join(' → ') || 'direct'}`,
    side,
    mint: mint.toBase58(),
    inRaw: BigInt(quote.inAmount),
    outRaw: BigInt(quote.outAmount),
    minOutRaw: BigInt(quote.otherAmountThreshold),
    slippageBps,
    feeLamports: fee,
    priceImpactPct: Number(quote.priceImpactPct) * 100,
    aggregator: quote,
  };
}

/** Prices a buy (`amount` in lamports) or a sell (`amount` in token base units) on the venue that trades the mint. */
export async function quoteTrade(aggregator: Aggregator, market: Market, side: TradeSide, amount: bigint, slippageBps: number): Promise<TradeQuote> {
  switch (market.venue) {
    case 'pump':
      return side === 'buy' ? curveBuyQuote(market, amount, slippageBps) : curveSellQuote(market, amount, slippageBps);
    case 'pump-amm':
      return side === 'buy' ? poolBuyQuote(market, amount, slippageBps) : poolSellQuote(market, amount, slippageBps);
    case 'jupiter':
      return aggregatorQuote(aggregator, market, side, amount, slippageBps);
    default: {
      const never: never = market;
      return never;
    }
  }
}

const discriminator = (idl: { instructions: readonly { name: string; discriminator: readonly number[] }[] }, name: string) =>
  Buffer.from(idl.instructions.find((ix) => ix.name === name)!.discriminator);
const CURVE_BUY = discriminator(pumpIdl, 'buy');
const POOL_BUY = discriminator(OFFLINE_PUMP_AMM_PROGRAM.idl, 'buy');

/**
 * The SDKs build ExactOut buys (`buy`: exact tokens for at most some SOL). The spec's buy spends exactly the SOL
 * with a floor on the tokens, which both programs have as an instruction with the very same accounts
 * (`buy_exact_sol_in`, `buy_exact_quote_in`): the SDK's instruction keeps its accounts and gets that data,
 * encoded by the bundled IDL's own coder.
 */
export function asExactIn(instructions: TransactionInstruction[], programId: PublicKey, data: Buffer): TransactionInstruction[] {
  const buy = programId.equals(PUMP_PROGRAM_ID) ? CURVE_BUY : POOL_BUY;
  let replaced = 0;
  const out = instructions.map((ix) => {
    if (!ix.programId.equals(programId) || !ix.data.subarray(0, 8).equals(buy)) return ix;
    replaced++;
    return new TransactionInstruction({ programId, keys: ix.keys, data });
  });
  if (replaced !== 1) throw new Error(`expected one buy instruction from the SDK, found ${replaced}`);
  return out;
}

let pumpProgram: ReturnType<typeof getPumpProgram> | undefined;

/** `buy_exact_sol_in`, encoded by the coder of an anchor Program over the pump IDL the SDK bundles (the SDK does not wrap it). */
export function curveBuyExactSolInData(connection: Connection, spendable: bigint, minTokensOut: bigint): Buffer {
  pumpProgram ??= getPumpProgram(connection);
  return pumpProgram.coder.instruction.encode('buyExactSolIn', { spendableSolIn: bn(spendable), minTokensOut: bn(minTokensOut), trackVolume: { 0: true } });
}

function poolBuyExactQuoteInData(spendable: bigint, minBaseOut: bigint): Buffer {
  return OFFLINE_PUMP_AMM_PROGRAM.coder.instruction.encode('buyExactQuoteIn', { spendableQuoteIn: bn(spendable), minBaseAmountOut: bn(minBaseOut), trackVolume: { 0: true } });
}

/** A compute-unit limit and the price that makes `priorityLamports` the whole priority fee at that limit. */
export function priorityInstructions(priorityLamports: bigint, units: number): TransactionInstruction[] {
  const microLamports = (priorityLamports * 1_000_000n) / BigInt(units);
  return [ComputeBudgetProgram.setComputeUnitLimit({ units }), ComputeBudgetProgram.setComputeUnitPrice({ microLamports })];
}

export interface TradeBuild {
  instructions: TransactionInstruction[];
  lookupTables?: AddressLookupTableAccount[];
}

/** Compute units a venue trade is given: enough for the account creations a first trade makes. */
export const TRADE_UNITS = 300_000;

/**
 * The instructions that carry out `quote` for `user`, with the quote's floor enforced on-chain. `closeAccount`
 * closes the user's token account after a sell of everything it holds, returning its rent.
 */
export async function tradeInstructions(
  aggregator: Aggregator,
  connection: Connection,
  market: Market,
  quote: TradeQuote,
  user: PublicKey,
  options: { priorityLamports: bigint; closeAccount?: boolean },
): Promise<TradeBuild> {
  const budget = priorityInstructions(options.priorityLamports, TRADE_UNITS);
  const close = options.closeAccount
    ? [createCloseAccountInstruction(getAssociatedTokenAddressSync(market.mint.address, user, true, market.mint.tokenProgram), user, user, [], market.mint.tokenProgram)]
    : [];
  switch (market.venue) {
    case 'pump': {
      const common = {
        global: market.global,
        bondingCurveAccountInfo: market.curveInfo,
        bondingCurve: market.curve,
        mint: market.mint.address,
        user,
        tokenProgram: market.mint.tokenProgram,
        slippage: 0,
      };
      if (quote.side === 'buy') {
        const built = await PUMP_SDK.buyInstructions({ ...common, associatedUserAccountInfo: market.userTokenAccount, amount: bn(quote.minOutRaw), solAmount: bn(quote.inRaw) });
        return { instructions: [...budget, ...asExactIn(built, PUMP_PROGRAM_ID, curveBuyExactSolInData(connection, quote.inRaw, quote.minOutRaw))] };
      }
      const built = await PUMP_SDK.sellInstructions({
        ...common,
        amount: bn(quote.inRaw),
        solAmount: bn(quote.minOutRaw),
        mayhemMode: market.curve.isMayhemMode,
        cashback: (market.curve as BondingCurve & { isCashbackCoin?: boolean }).isCashbackCoin,
      });
      return { instructions: [...budget, ...built, ...close] };
    }
    case 'pump-amm': {
      const state = { ...market.state, user };
      if (quote.side === 'buy') {
        // maxQuote is what the SDK wraps into the temporary wSOL account: exactly the SOL to spend.
        const built = await PUMP_AMM_SDK.buyInstructions(state, bn(quote.minOutRaw), bn(quote.inRaw));
        return { instructions: [...budget, ...asExactIn(built, PUMP_AMM_PROGRAM_ID, poolBuyExactQuoteInData(quote.inRaw, quote.minOutRaw))] };
      }
      const built = await PUMP_AMM_SDK.sellInstructions(state, bn(quote.inRaw), bn(quote.minOutRaw));
      return { instructions: [...budget, ...built, ...close] };
    }
    case 'jupiter': {
      const built = await aggregator.swapInstructions(connection, quote.aggregator!, user, options.priorityLamports);
      return { instructions: [...built.instructions, ...close], lookupTables: built.lookupTables };
    }
    default: {
      const never: never = market;
      return never;
    }
  }
}

