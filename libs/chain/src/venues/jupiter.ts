import type { Connection, PublicKey } from '@solana/web3.js';
import { NATIVE_MINT } from '@solana/spl-token';
import type { BondingCurve } from '@pump-fun/pump-sdk';
import type { Aggregator } from './aggregator';
import { closeAccountInstructions } from './pump';
import { FIRST_TRADE_RENT, type MintState, type TradeBuild, type TradeOptions, type TradeQuote, type TradeSide, type Venue } from './venue';

/** Any mint neither pump venue trades: routed through the Jupiter-compatible aggregator, against SOL. */
export class AggregatorVenue implements Venue {
  readonly name = 'jupiter';

  constructor(
    private readonly connection: Connection,
    private readonly aggregator: Aggregator,
    readonly mint: MintState,
    readonly curve: BondingCurve | null,
    readonly userLamports: bigint,
  ) {}

  async quote(side: TradeSide, amount: bigint, slippageBps: number): Promise<TradeQuote> {
    const mint = this.mint.address;
    const [input, output] = side === 'buy' ? [NATIVE_MINT, mint] : [mint, NATIVE_MINT];
    const quote = await this.aggregator.quote(input, output, amount, slippageBps);
    const fee = quote.routePlan.reduce((sum, step) => sum + (step.swapInfo.feeMint === NATIVE_MINT.toBase58() ? BigInt(step.swapInfo.feeAmount) : 0n), 0n);
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

  async build(quote: TradeQuote, user: PublicKey, options: TradeOptions): Promise<TradeBuild> {
    const built = await this.aggregator.swapInstructions(this.connection, quote.aggregator!, user, options.priorityLamports);
    return { instructions: [...built.instructions, ...closeAccountInstructions(this.mint, user, options)], lookupTables: built.lookupTables };
  }

  openingRent(): bigint {
    return FIRST_TRADE_RENT;
  }
}
