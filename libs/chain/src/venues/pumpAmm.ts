import BN from 'bn.js';
import type { AccountInfo, PublicKey } from '@solana/web3.js';
import type { BondingCurve } from '@pump-fun/pump-sdk';
import { OFFLINE_PUMP_AMM_PROGRAM, PUMP_AMM_PROGRAM_ID, PUMP_AMM_SDK, buyQuoteInput, sellBaseInput, type SwapSolanaState } from '@pump-fun/pump-swap-sdk';
import { ChainError } from '../errors';
import { asExactIn, big, bn, closeAccountInstructions, tooSmall } from './pump';
import { FIRST_TRADE_RENT, TRADE_UNITS, impactPct, minOut, priorityInstructions, type MintState, type TradeBuild, type TradeOptions, type TradeQuote, type TradeSide, type Venue } from './venue';

/** The swap SDK's pricing inputs (buyQuoteInput, sellBaseInput, ...), all read from a pool's SwapSolanaState. */
/**
 * Whether an account at a coin's canonical pool address is a PumpSwap pool. The address is known before the pool
 * exists, and anyone may send lamports to it: that makes a system account there, which is no pool, and a coin still
 * on its curve must not be read as graduated (nor its bytes decoded as a pool).
 */
export function isPumpPool(info: AccountInfo<Buffer> | null | undefined): info is AccountInfo<Buffer> {
  return !!info && info.owner.equals(PUMP_AMM_PROGRAM_ID);
}

export function swapPricing(s: SwapSolanaState) {
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

/** A graduated coin's canonical PumpSwap pool as read for a user. */
export interface PoolState {
  mint: MintState;
  pool: PublicKey;
  /** Everything the PumpSwap SDK needs to price and build a swap for the user. */
  swap: SwapSolanaState;
  /** The completed curve it graduated from, when there was one. */
  curve: BondingCurve | null;
  userLamports: bigint;
}

/** A graduated coin: `buy_exact_quote_in` and `sell` in its canonical PumpSwap pool, priced by the swap SDK. */
export class PoolVenue implements Venue {
  readonly name = 'pump-amm';

  constructor(readonly state: PoolState) {}

  get mint(): MintState {
    return this.state.mint;
  }

  get userLamports(): bigint {
    return this.state.userLamports;
  }

  get curve(): BondingCurve | null {
    return this.state.curve;
  }

  async quote(side: TradeSide, amount: bigint, slippageBps: number): Promise<TradeQuote> {
    return side === 'buy' ? this.buyQuote(amount, slippageBps) : this.sellQuote(amount, slippageBps);
  }

  private inputs() {
    return swapPricing(this.state.swap);
  }

  private effectiveQuote(): number {
    const s = this.state.swap;
    return Number(s.poolQuoteAmount.add(s.pool.virtualQuoteReserves ?? new BN(0)).toString());
  }

  /** What `buy_exact_quote_in` with `spend` lamports yields on the pool, by the swap SDK's buyQuoteInput. */
  private buyQuote(spend: bigint, slippageBps: number): TradeQuote {
    const quoted = buyQuoteInput({ ...this.inputs(), quote: bn(spend) });
    const out = big(quoted.base);
    const net = big(quoted.internalQuoteWithoutFees);
    const baseAmount = this.state.swap.poolBaseAmount;
    if (out <= 0n || net <= 1n) throw tooSmall('it does not cover the pool fees');
    if (out >= big(baseAmount)) throw ChainError.refusal('invalid_request', 'the pool holds fewer tokens than this buys', { field: 'amount_sol' });
    return {
      venue: 'pump-amm',
      route: 'PumpSwap pool: buy_exact_quote_in',
      side: 'buy',
      mint: this.mint.address.toBase58(),
      inRaw: spend,
      outRaw: out,
      minOutRaw: minOut(out, slippageBps),
      slippageBps,
      feeLamports: spend > net ? spend - net : 0n,
      priceImpactPct: impactPct(out, (Number(net) * Number(baseAmount.toString())) / this.effectiveQuote()),
    };
  }

  /** What selling `tokens` into the pool returns, by the swap SDK's sellBaseInput. */
  private sellQuote(tokens: bigint, slippageBps: number): TradeQuote {
    let quoted: ReturnType<typeof sellBaseInput>;
    try {
      quoted = sellBaseInput({ ...this.inputs(), base: bn(tokens) });
    } catch (error) {
      throw ChainError.refusal('invalid_request', `the pool cannot take this sell: ${(error as Error).message}`, { field: 'amount' });
    }
    const out = big(quoted.uiQuote);
    if (out <= 0n) throw tooSmall('it sells for nothing after fees');
    const gross = big(quoted.internalQuoteAmountOut);
    return {
      venue: 'pump-amm',
      route: 'PumpSwap pool: sell',
      side: 'sell',
      mint: this.mint.address.toBase58(),
      inRaw: tokens,
      outRaw: out,
      minOutRaw: minOut(out, slippageBps),
      slippageBps,
      feeLamports: gross > out ? gross - out : 0n,
      priceImpactPct: impactPct(gross, (Number(tokens) * this.effectiveQuote()) / Number(this.state.swap.poolBaseAmount.toString())),
    };
  }

  async build(quote: TradeQuote, user: PublicKey, options: TradeOptions): Promise<TradeBuild> {
    const budget = priorityInstructions(options.priorityLamports, TRADE_UNITS);
    const swap = { ...this.state.swap, user };
    if (quote.side === 'buy') {
      // maxQuote is what the SDK wraps into the temporary wSOL account: exactly the SOL to spend.
      const built = await PUMP_AMM_SDK.buyInstructions(swap, bn(quote.minOutRaw), bn(quote.inRaw));
      return { instructions: [...budget, ...asExactIn(built, PUMP_AMM_PROGRAM_ID, poolBuyExactQuoteInData(quote.inRaw, quote.minOutRaw))] };
    }
    const built = await PUMP_AMM_SDK.sellInstructions(swap, bn(quote.inRaw), bn(quote.minOutRaw));
    return { instructions: [...budget, ...built, ...closeAccountInstructions(this.mint, user, options)] };
  }

  openingRent(): bigint {
    return this.state.swap.userBaseAccountInfo ? 0n : FIRST_TRADE_RENT;
  }
}

function poolBuyExactQuoteInData(spendable: bigint, minBaseOut: bigint): Buffer {
  return OFFLINE_PUMP_AMM_PROGRAM.coder.instruction.encode('buyExactQuoteIn', { spendableQuoteIn: bn(spendable), minBaseAmountOut: bn(minBaseOut), trackVolume: { 0: true } });
}
