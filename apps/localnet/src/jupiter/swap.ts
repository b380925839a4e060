import BN from 'bn.js';
import { PublicKey, TransactionInstruction, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { PUMP_PROGRAM_ID, PUMP_SDK, pumpIdl } from '@pump-fun/pump-sdk';
import { OFFLINE_PUMP_AMM_PROGRAM, PUMP_AMM_PROGRAM_ID, PUMP_AMM_SDK, SwapSolanaState } from '@pump-fun/pump-swap-sdk';
import { JupiterError } from './errors';
import type { SwapRequest } from './params';
import { ChainReader, CurveVenue, PoolVenue, SOL_MINT, accountInfo, venueAt } from './venues';
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

async function curveInstructions(chain: ChainReader, venue: CurveVenue, request: SwapRequest): Promise<TransactionInstruction[]> {
  const user = request.userPublicKey;
  const mint = venue.mint.address;
  const tokenProgram = venue.mint.tokenProgram;
  const common = { global: venue.global, bondingCurveAccountInfo: venue.info, bondingCurve: venue.curve, mint, user, tokenProgram, slippage: 0 };
  if (request.inputMint.equals(SOL_MINT)) {
    const built = await PUMP_SDK.buyInstructions({
      ...common,
      associatedUserAccountInfo: accountInfo(chain, associatedTokenAddress(mint, user, tokenProgram)),
      amount: bn(request.otherAmountThreshold),
      solAmount: bn(request.inAmount),
    });
    return asExactIn(built, PUMP_PROGRAM_ID, CURVE_BUY, curveBuyExactSolInData(request.inAmount, request.otherAmountThreshold));
  }
  return PUMP_SDK.sellInstructions({
    ...common,
    amount: bn(request.inAmount),
    solAmount: bn(request.otherAmountThreshold),
    mayhemMode: venue.curve.isMayhemMode,
    cashback: venue.curve.isCashbackCoin,
  });
}

function swapState(chain: ChainReader, venue: PoolVenue, user: PublicKey): SwapSolanaState {
  const { pool } = venue;
  const userBaseTokenAccount = associatedTokenAddress(pool.baseMint, user, venue.base.tokenProgram);
  const userQuoteTokenAccount = associatedTokenAddress(pool.quoteMint, user, venue.quote.tokenProgram);
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
    userBaseAccountInfo: accountInfo(chain, userBaseTokenAccount),
    userQuoteAccountInfo: accountInfo(chain, userQuoteTokenAccount),
  };
}

async function poolInstructions(chain: ChainReader, venue: PoolVenue, request: SwapRequest): Promise<TransactionInstruction[]> {
  const state = swapState(chain, venue, request.userPublicKey);
  if (request.inputMint.equals(venue.pool.quoteMint)) {
    // maxQuoteIn is what the SDK wraps into the temporary wSOL account: exactly the input.
    const built = await PUMP_AMM_SDK.buyInstructions(state, bn(request.otherAmountThreshold), bn(request.inAmount));
    return asExactIn(built, PUMP_AMM_PROGRAM_ID, POOL_BUY, poolBuyExactQuoteInData(request.inAmount, request.otherAmountThreshold));
  }
  return PUMP_AMM_SDK.sellInstructions(state, bn(request.inAmount), bn(request.otherAmountThreshold));
}

/** An unsigned transaction (v0 unless asked for legacy), paid by the user, executing the quote on its venue with the quote's floor. */
export async function buildSwap(
  chain: ChainReader,
  latest: { blockhash: string; lastValidBlockHeight: number },
  request: SwapRequest,
): Promise<SwapResponse> {
  const venue = venueAt(chain, request.ammKey, request.inputMint, request.outputMint);
  if (!venue) throw new JupiterError(400, 'MARKET_NOT_FOUND', `Market ${request.ammKey.toBase58()} for this pair does not exist or no longer trades; quote again`);
  const instructions = venue.kind === 'curve' ? await curveInstructions(chain, venue, request) : await poolInstructions(chain, venue, request);
  const draft = new TransactionMessage({ payerKey: request.userPublicKey, recentBlockhash: latest.blockhash, instructions });
  const message = request.asLegacyTransaction ? draft.compileToLegacyMessage() : draft.compileToV0Message();
  const transaction = new VersionedTransaction(message);
  return {
    swapTransaction: Buffer.from(transaction.serialize()).toString('base64'),
    lastValidBlockHeight: latest.lastValidBlockHeight,
    prioritizationFeeLamports: 0,
    computeUnitLimit: computeUnitLimit(instructions.length),
    prioritizationType: { computeBudget: { microLamports: 0, estimatedMicroLamports: 0 } },
    dynamicSlippageReport: null,
    simulationError: null,
  };
}
