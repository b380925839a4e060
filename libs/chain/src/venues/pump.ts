import BN from 'bn.js';
import { TransactionInstruction, type AccountInfo, type Connection, type PublicKey } from '@solana/web3.js';
import { NATIVE_MINT, createCloseAccountInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import {
  PUMP_PROGRAM_ID,
  PUMP_SDK,
  getBuySolAmountFromTokenAmount,
  getBuyTokenAmountFromSolAmount,
  getSellSolAmountFromTokenAmount,
  getPumpProgram,
  pumpIdl,
  type BondingCurve,
  type FeeConfig,
  type Global,
} from '@pump-fun/pump-sdk';
import { OFFLINE_PUMP_AMM_PROGRAM } from '@pump-fun/pump-swap-sdk';
import { ChainError } from '../errors';
import { FIRST_TRADE_RENT, TRADE_UNITS, impactPct, minOut, priorityInstructions, type MintState, type TradeBuild, type TradeOptions, type TradeQuote, type TradeSide, type Venue } from './venue';

/** pump prices the fee tier of a coin that is not in mayhem mode as if its supply were one billion tokens. */
const ONE_BILLION_SUPPLY = new BN('1000000000000000');

export const big = (n: BN) => BigInt(n.toString());
export const bn = (n: bigint) => new BN(n.toString());

export const tooSmall = (what: string) => ChainError.refusal('invalid_request', `the amount is too small to trade: ${what}`, { field: 'amount' });

/** A coin's pump bonding curve as read for a user, with what the SDK prices and builds with. */
export interface CurveState {
  mint: MintState;
  bondingCurve: PublicKey;
  curveInfo: AccountInfo<Buffer>;
  curve: BondingCurve;
  global: Global;
  feeConfig: FeeConfig | null;
  /** The user's associated token account of the mint (null: it does not exist). */
  userTokenAccount: AccountInfo<Buffer> | null;
  userLamports: bigint;
}

/** A coin on its pump bonding curve: `buy_exact_sol_in` and `sell`, priced by the pump SDK's own math. */
export class CurveVenue implements Venue {
  readonly name = 'pump';

  constructor(
    private readonly connection: Connection,
    readonly state: CurveState,
  ) {}

  get mint(): MintState {
    return this.state.mint;
  }

  get userLamports(): bigint {
    return this.state.userLamports;
  }

  get curve(): BondingCurve {
    return this.state.curve;
  }

  get bondingCurve(): PublicKey {
    return this.state.bondingCurve;
  }

  async quote(side: TradeSide, amount: bigint, slippageBps: number): Promise<TradeQuote> {
    return side === 'buy' ? this.buyQuote(amount, slippageBps) : this.sellQuote(amount, slippageBps);
  }

  private inputs() {
    const { curve, global, feeConfig } = this.state;
    return { global, feeConfig, bondingCurve: curve, mintSupply: curve.isMayhemMode ? bn(this.mint.supply) : ONE_BILLION_SUPPLY };
  }

  /** What `buy_exact_sol_in` with `spend` lamports yields, by the SDK's own math (getBuyTokenAmountFromSolAmount). */
  private buyQuote(spend: bigint, slippageBps: number): TradeQuote {
    const inputs = this.inputs();
    const { curve } = this.state;
    let out = big(getBuyTokenAmountFromSolAmount({ ...inputs, amount: bn(spend), quoteMint: NATIVE_MINT }));
    out = out < big(curve.realTokenReserves) ? out : big(curve.realTokenReserves);
    if (out <= 0n) throw tooSmall('it does not cover the venue fees');
    const vT = big(curve.virtualTokenReserves);
    const vQ = big(curve.virtualQuoteReserves);
    const intoCurve = (out * vQ) / (vT - out) + 1n;
    const cost = big(getBuySolAmountFromTokenAmount({ ...inputs, amount: bn(out), quoteMint: NATIVE_MINT }));
    return {
      venue: 'pump',
      route: 'pump bonding curve: buy_exact_sol_in',
      side: 'buy',
      mint: this.mint.address.toBase58(),
      inRaw: spend,
      outRaw: out,
      minOutRaw: minOut(out, slippageBps),
      slippageBps,
      feeLamports: cost > intoCurve ? cost - intoCurve : 0n,
      priceImpactPct: impactPct(out, (Number(intoCurve) * Number(vT)) / Number(vQ)),
    };
  }

  /** What selling `tokens` on the curve returns, by the SDK's getSellSolAmountFromTokenAmount. */
  private sellQuote(tokens: bigint, slippageBps: number): TradeQuote {
    const { curve } = this.state;
    const vT = big(curve.virtualTokenReserves);
    const vQ = big(curve.virtualQuoteReserves);
    const gross = (tokens * vQ) / (vT + tokens);
    if (gross > big(curve.realQuoteReserves)) throw ChainError.refusal('invalid_request', 'the bonding curve holds less SOL than this sells for', { field: 'amount' });
    const out = big(getSellSolAmountFromTokenAmount({ ...this.inputs(), amount: bn(tokens) }));
    if (out <= 0n) throw tooSmall('it sells for nothing after fees');
    return {
      venue: 'pump',
      route: 'pump bonding curve: sell',
      side: 'sell',
      mint: this.mint.address.toBase58(),
      inRaw: tokens,
      outRaw: out,
      minOutRaw: minOut(out, slippageBps),
      slippageBps,
      feeLamports: gross - out,
      priceImpactPct: impactPct(gross, (Number(tokens) * Number(vQ)) / Number(vT)),
    };
  }

  async build(quote: TradeQuote, user: PublicKey, options: TradeOptions): Promise<TradeBuild> {
    const budget = priorityInstructions(options.priorityLamports, TRADE_UNITS);
    const { state } = this;
    const common = {
      global: state.global,
      bondingCurveAccountInfo: state.curveInfo,
      bondingCurve: state.curve,
      mint: this.mint.address,
      user,
      tokenProgram: this.mint.tokenProgram,
      slippage: 0,
    };
    if (quote.side === 'buy') {
      const built = await PUMP_SDK.buyInstructions({ ...common, associatedUserAccountInfo: state.userTokenAccount, amount: bn(quote.minOutRaw), solAmount: bn(quote.inRaw) });
      return { instructions: [...budget, ...asExactIn(built, PUMP_PROGRAM_ID, curveBuyExactSolInData(this.connection, quote.inRaw, quote.minOutRaw))] };
    }
    const built = await PUMP_SDK.sellInstructions({
      ...common,
      amount: bn(quote.inRaw),
      solAmount: bn(quote.minOutRaw),
      mayhemMode: state.curve.isMayhemMode,
      cashback: (state.curve as BondingCurve & { isCashbackCoin?: boolean }).isCashbackCoin,
    });
    return { instructions: [...budget, ...built, ...closeAccountInstructions(this.mint, user, options)] };
  }

  openingRent(): bigint {
    return this.state.userTokenAccount ? 0n : FIRST_TRADE_RENT;
  }
}

/** Closes the user's token account after a sell of everything, when asked to. */
export function closeAccountInstructions(mint: MintState, user: PublicKey, options: TradeOptions): TransactionInstruction[] {
  if (!options.closeAccount) return [];
  return [createCloseAccountInstruction(getAssociatedTokenAddressSync(mint.address, user, true, mint.tokenProgram), user, user, [], mint.tokenProgram)];
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
