import BN from 'bn.js';
import { AddressLookupTableAccount, PublicKey, TransactionInstruction, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { PUMP_PROGRAM_ID, PUMP_SDK, pumpIdl } from '@pump-fun/pump-sdk';
import { OFFLINE_PUMP_AMM_PROGRAM, PUMP_AMM_PROGRAM_ID, PUMP_AMM_SDK, SwapSolanaState } from '@pump-fun/pump-swap-sdk';
import { JupiterError } from './errors';
import type { SwapLeg, SwapRequest } from './params';
import { ChainReader, CurveVenue, PoolVenue, SOL_MINT, Venue, accountInfo, venueAt } from './venues';
import { associatedTokenAddress } from '../runtime/pda';

export interface SwapResponse {
  swapTransaction: string;
  lastValidBlockHeight: number;
  prioritizationFeeLamports: number;
  computeUnitLimit: number;
  prioritizationType: { computeBudget: { microLamports: number; estimatedMicroLamports: number } };
  dynamicSlippageReport: null;
  simulationError: null;
}

/** The compute budget a transaction without a SetComputeUnitLimit gets: 200k per instruction, capped. */
const computeUnitLimit = (instructions: number) => Math.min(200_000 * instructions, 1_400_000);

const discriminator = (instructions: readonly { name: string; discriminator: number[] }[], name: string) =>
  Buffer.from(instructions.find((ix) => ix.name === name)!.discriminator);
const CURVE_BUY = discriminator(pumpIdl.instructions, 'buy');
const CURVE_BUY_EXACT_SOL_IN = discriminator(pumpIdl.instructions, 'buy_exact_sol_in');
const POOL_BUY = discriminator(OFFLINE_PUMP_AMM_PROGRAM.idl.instructions, 'buy');

const bn = (n: bigint) => new BN(n.toString());

function u64le(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
}

/** `buy_exact_sol_in(spendable_sol_in, min_tokens_out, track_volume)`, borsh-encoded as pump's IDL lays it out. */
export function curveBuyExactSolInData(spendableSolIn: bigint, minTokensOut: bigint): Buffer {
  return Buffer.concat([CURVE_BUY_EXACT_SOL_IN, u64le(spendableSolIn), u64le(minTokensOut), Buffer.from([1])]);
}

export function poolBuyExactQuoteInData(spendableQuoteIn: bigint, minBaseAmountOut: bigint): Buffer {
  return OFFLINE_PUMP_AMM_PROGRAM.coder.instruction.encode('buyExactQuoteIn', {
    spendableQuoteIn: bn(spendableQuoteIn),
    minBaseAmountOut: bn(minBaseAmountOut),
    trackVolume: { 0: true },
  });
}

/**
 * The SDKs build ExactOut buys (`buy`: exact tokens for at most some SOL); Jupiter's ExactIn spends exactly the
 * input with a floor on the output. Both programs have that instruction with the very same accounts
 * (`buy_exact_sol_in`, `buy_exact_quote_in`), so the SDK's instruction keeps its accounts and gets new data.
 */
function asExactIn(instructions: TransactionInstruction[], programId: PublicKey, buy: Buffer, data: Buffer): TransactionInstruction[] {
  let replaced = 0;
  const out = instructions.map((ix) => {
    if (!ix.programId.equals(programId) || !ix.data.subarray(0, 8).equals(buy)) return ix;
    replaced++;
    return new TransactionInstruction({ programId, keys: ix.keys, data });
  });
  if (replaced !== 1) throw new Error(`expected one buy instruction from the SDK, found ${replaced}`);
  return out;
}

/** One leg as the transaction executes it: exactly `inAmount` in, at least `minOut` out. */
interface LegTrade {
  user: PublicKey;
  inputMint: PublicKey;
  inAmount: bigint;
  minOut: bigint;
  /** The user's wrapped-SOL account is gone by the time this leg runs (an earlier leg unwrapped and closed it). */
  wsolClosed: boolean;
}

async function curveInstructions(chain: ChainReader, venue: CurveVenue, trade: LegTrade): Promise<TransactionInstruction[]> {
  const user = trade.user;
  const mint = venue.mint.address;
  const tokenProgram = venue.mint.tokenProgram;
  const common = { global: venue.global, bondingCurveAccountInfo: venue.info, bondingCurve: venue.curve, mint, user, tokenProgram, slippage: 0 };
  if (trade.inputMint.equals(SOL_MINT)) {
    const built = await PUMP_SDK.buyInstructions({
      ...common,
      associatedUserAccountInfo: accountInfo(chain, associatedTokenAddress(mint, user, tokenProgram)),
      amount: bn(trade.minOut),
      solAmount: bn(trade.inAmount),
    });
    return asExactIn(built, PUMP_PROGRAM_ID, CURVE_BUY, curveBuyExactSolInData(trade.inAmount, trade.minOut));
  }
  return PUMP_SDK.sellInstructions({
    ...common,
    amount: bn(trade.inAmount),
    solAmount: bn(trade.minOut),
    mayhemMode: venue.curve.isMayhemMode,
    cashback: venue.curve.isCashbackCoin,
  });
}

function swapState(chain: ChainReader, venue: PoolVenue, trade: LegTrade): SwapSolanaState {
  const { pool } = venue;
  const user = trade.user;
  const userBaseTokenAccount = associatedTokenAddress(pool.baseMint, user, venue.base.tokenProgram);
  const userQuoteTokenAccount = associatedTokenAddress(pool.quoteMint, user, venue.quote.tokenProgram);
  // The SDK opens a wrapped-SOL account only when it finds none; one an earlier leg closed must be opened again.
  const existing = (mint: PublicKey, address: PublicKey) => (trade.wsolClosed && mint.equals(SOL_MINT) ? null : accountInfo(chain, address));
  return {
    globalConfig: venue.globalConfig,
    feeConfig: venue.feeConfig,
    poolKey: venue.address,
    poolAccountInfo: venue.info,
    pool,
    poolBaseAmount: venue.baseReserve,
    poolQuoteAmount: venue.quoteReserve,
    baseTokenProgram: venue.base.tokenProgram,
    quoteTokenProgram: venue.quote.tokenProgram,
    baseMint: pool.baseMint,
    baseMintAccount: venue.base.raw,
    user,
    userBaseTokenAccount,
    userQuoteTokenAccount,
    userBaseAccountInfo: existing(pool.baseMint, userBaseTokenAccount),
    userQuoteAccountInfo: existing(pool.quoteMint, userQuoteTokenAccount),
  };
}

async function poolInstructions(chain: ChainReader, venue: PoolVenue, trade: LegTrade): Promise<TransactionInstruction[]> {
  const state = swapState(chain, venue, trade);
  if (trade.inputMint.equals(venue.pool.quoteMint)) {
    // maxQuoteIn is what the SDK wraps into the temporary wSOL account: exactly the input.
    const built = await PUMP_AMM_SDK.buyInstructions(state, bn(trade.minOut), bn(trade.inAmount));
    return asExactIn(built, PUMP_AMM_PROGRAM_ID, POOL_BUY, poolBuyExactQuoteInData(trade.inAmount, trade.minOut));
  }
  return PUMP_AMM_SDK.sellInstructions(state, bn(trade.inAmount), bn(trade.minOut));
}

/** Whether a leg's instructions leave the user's wrapped-SOL account closed: the swap SDK unwraps after every SOL leg. */
const closesWsol = (venue: Venue): boolean => venue.kind === 'pool' && (venue.pool.quoteMint.equals(SOL_MINT) || venue.pool.baseMint.equals(SOL_MINT));

/**
 * The legs of a route, in one transaction. A later leg spends a fixed amount (the programs' exact-input buys take
 * the amount in their data), so every leg but the last has the amount the next one spends as its own on-chain floor:
 * the transaction then never spends SOL the user did not get from the route. Only the last leg carries the quote's
 * threshold, so the slippage applies once, to what the user receives. An earlier leg that would yield less than the
 * quote planned fails the whole transaction; one that yields more leaves the difference with the user, in SOL.
 */
async function routeInstructions(chain: ChainReader, request: SwapRequest): Promise<TransactionInstruction[]> {
  const { legs } = request;
  if (legs.length > 1 && !legs.slice(0, -1).every((leg) => leg.outputMint.equals(SOL_MINT))) {
    throw new JupiterError(400, 'NOT_SUPPORTED', 'Only routes through SOL are supported on the localnet');
  }
  const instructions: TransactionInstruction[] = [];
  let wsolClosed = false;
  for (const [i, leg] of legs.entries()) {
    const venue = marketOf(chain, leg);
    const last = i === legs.length - 1;
    const trade: LegTrade = { user: request.userPublicKey, inputMint: leg.inputMint, inAmount: leg.inAmount, minOut: last ? request.otherAmountThreshold : leg.outAmount, wsolClosed };
    instructions.push(...(venue.kind === 'curve' ? await curveInstructions(chain, venue, trade) : await poolInstructions(chain, venue, trade)));
    wsolClosed ||= closesWsol(venue);
  }
  return instructions;
}

function marketOf(chain: ChainReader, leg: SwapLeg): Venue {
  const venue = venueAt(chain, leg.ammKey, leg.inputMint, leg.outputMint);
  if (!venue) throw new JupiterError(400, 'MARKET_NOT_FOUND', `Market ${leg.ammKey.toBase58()} for this pair does not exist or no longer trades; quote again`);
  return venue;
}

/** The most bytes a transaction may take on the wire. */
const PACKET_DATA_SIZE = 1232;

/**
 * An unsigned transaction (v0 unless asked for legacy), paid by the user, executing the quote's route with the quote's
 * floor. A v0 transaction looks up what it can in `lookupTables`.
 */
export async function buildSwap(
  chain: ChainReader,
  latest: { blockhash: string; lastValidBlockHeight: number },
  request: SwapRequest,
  lookupTables: AddressLookupTableAccount[] = [],
): Promise<SwapResponse> {
  const instructions = await routeInstructions(chain, request);
  const draft = new TransactionMessage({ payerKey: request.userPublicKey, recentBlockhash: latest.blockhash, instructions });
  let wire: Uint8Array;
  try {
    const message = request.asLegacyTransaction ? draft.compileToLegacyMessage() : draft.compileToV0Message(lookupTables);
    wire = new VersionedTransaction(message).serialize();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    wire = new Uint8Array(PACKET_DATA_SIZE + 1);
  }
  if (wire.length > PACKET_DATA_SIZE) {
    throw new JupiterError(400, 'NOT_SUPPORTED', `This route does not fit one ${request.asLegacyTransaction ? 'legacy' : 'versioned'} transaction${request.asLegacyTransaction ? '; ask without asLegacyTransaction' : ''}`);
  }
  return {
    swapTransaction: Buffer.from(wire).toString('base64'),
    lastValidBlockHeight: latest.lastValidBlockHeight,
    prioritizationFeeLamports: 0,
    computeUnitLimit: computeUnitLimit(instructions.length),
    prioritizationType: { computeBudget: { microLamports: 0, estimatedMicroLamports: 0 } },
    dynamicSlippageReport: null,
    simulationError: null,
  };
}
