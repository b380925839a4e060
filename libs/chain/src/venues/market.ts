import { PublicKey, type AccountInfo, type Connection } from '@solana/web3.js';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, AccountLayout, MINT_SIZE, MintLayout, getAssociatedTokenAddressSync, unpackMint } from '@solana/spl-token';
import { GLOBAL_PDA, PUMP_FEE_CONFIG_PDA, PUMP_SDK, bondingCurvePda, canonicalPumpPoolPda } from '@pump-fun/pump-sdk';
import { GLOBAL_CONFIG_PDA, PUMP_AMM_FEE_CONFIG_PDA, PUMP_AMM_SDK, type SwapSolanaState } from '@pump-fun/pump-swap-sdk';
import BN from 'bn.js';
import { ChainError } from '../errors';
import { TOKEN_PROGRAMS } from '../tokens';
import type { Aggregator } from './aggregator';
import { AggregatorVenue } from './jupiter';
import { CurveVenue } from './pump';
import { PoolVenue, isPumpPool } from './pumpAmm';
import { awaitsMigration, type MintState, type Venue } from './venue';

const unknownMint = (mint: PublicKey) => ChainError.refusal('unknown_mint', `${mint.toBase58()} is not a token mint on this chain`, { mint: mint.toBase58() });

/** A trade asked of a coin between its curve and its pool; `waitedMs` is how long the caller waited for the pool. */
export function graduating(mint: PublicKey, waitedMs: number): ChainError {
  const pool = canonicalPumpPoolPda(mint).toBase58();
  const waited = waitedMs > 0 ? `, and it did not appear within ${waitedMs} ms` : '';
  return ChainError.refusal(
    'graduating',
    `${mint.toBase58()} has completed its bonding curve and is migrating to its PumpSwap pool ${pool}, which does not exist yet${waited}: ` +
      'nothing trades it until then; retry after Retry-After seconds',
    { mint: mint.toBase58(), pool },
    Math.max(1, Math.ceil(waitedMs / 1000)),
  );
}

/** A mint account decoded, or undefined when `info` is not an initialized mint of either token program. */
export function decodeMint(address: PublicKey, info: AccountInfo<Buffer> | null): MintState | undefined {
  const tokenProgram = info && TOKEN_PROGRAMS.find((program) => program.equals(info.owner));
  if (!info || !tokenProgram) return undefined;
  try {
    const raw = unpackMint(address, info, tokenProgram);
    if (!raw.isInitialized) return undefined;
    return { address, tokenProgram, decimals: raw.decimals, supply: raw.supply, raw: MintLayout.decode(info.data.subarray(0, MINT_SIZE)) };
  } catch {
    return undefined;
  }
}

/**
 * Which venue trades `mint` right now, with the state its SDK needs, read in one batched call (two for a
 * graduated coin, whose pool names its token accounts): the pump curve while the coin is on it, its canonical
 * PumpSwap pool once it graduated, the aggregator for everything else. This is the one place that chooses.
 * 404 unknown_mint when it is no mint; `graduating` while its curve is complete and its pool does not exist yet
 * (the aggregator has no route for it either: see readMarketAwaitingPool).
 */
export async function readMarket(connection: Connection, aggregator: Aggregator, mint: PublicKey, user: PublicKey = PublicKey.default): Promise<Venue> {
  const curveAddress = bondingCurvePda(mint);
  const poolAddress = canonicalPumpPoolPda(mint);
  const userAccounts = [getAssociatedTokenAddressSync(mint, user, true, TOKEN_2022_PROGRAM_ID), getAssociatedTokenAddressSync(mint, user, true, TOKEN_PROGRAM_ID)];
  const [mintInfo, curveInfo, globalInfo, feeConfigInfo, poolInfo, user2022, userLegacy, userInfo] = await connection.getMultipleAccountsInfo(
    [mint, curveAddress, GLOBAL_PDA, PUMP_FEE_CONFIG_PDA, poolAddress, ...userAccounts, user],
    'confirmed',
  );
  const userLamports = BigInt(userInfo?.lamports ?? 0);
  const state = decodeMint(mint, mintInfo);
  if (!state) throw unknownMint(mint);
  const curve = curveInfo ? PUMP_SDK.decodeBondingCurveNullable(curveInfo) : null;
  if (curve && curveInfo && !curve.complete && globalInfo) {
    return new CurveVenue(connection, {
      mint: state,
      bondingCurve: curveAddress,
      curveInfo,
      curve,
      global: decodeGlobal(globalInfo),
      feeConfig: feeConfigInfo ? decodeFeeConfig(feeConfigInfo) : null,
      userTokenAccount: state.tokenProgram.equals(TOKEN_2022_PROGRAM_ID) ? user2022 : userLegacy,
      userLamports,
    });
  }
  if (isPumpPool(poolInfo)) return new PoolVenue({ mint: state, pool: poolAddress, swap: await poolState(connection, poolAddress, poolInfo, state, user), curve, userLamports });
  if (curve && awaitsMigration(curve)) throw graduating(mint, 0);
  return new AggregatorVenue(connection, aggregator, state, curve, userLamports);
}

/**
 * A decoder that keeps its last answer: pump's Global and fee config change rarely, and decoding the fee
 * config's tiers through anchor costs about a millisecond a trade.
 */
function lastDecoded<T>(decode: (info: AccountInfo<Buffer>) => T): (info: AccountInfo<Buffer>) => T {
  let last: { data: Buffer; value: T } | undefined;
  return (info) => {
    if (last && last.data.equals(info.data)) return last.value;
    const value = decode(info);
    last = { data: Buffer.from(info.data), value };
    return value;
  };
}
const decodeGlobal = lastDecoded((info) => PUMP_SDK.decodeGlobal(info));
const decodeFeeConfig = lastDecoded((info) => PUMP_SDK.decodeFeeConfig(info));

/** The PumpSwap SDK's SwapSolanaState, as OnlinePumpAmmSdk.swapSolanaState builds it, from one more batched read. */
async function poolState(connection: Connection, poolKey: PublicKey, poolAccountInfo: AccountInfo<Buffer>, base: MintState, user: PublicKey): Promise<SwapSolanaState> {
  const pool = PUMP_AMM_SDK.decodePool(poolAccountInfo);
  const quoteTokenProgram = TOKEN_PROGRAM_ID;
  const userBaseTokenAccount = getAssociatedTokenAddressSync(pool.baseMint, user, true, base.tokenProgram);
  const userQuoteTokenAccount = getAssociatedTokenAddressSync(pool.quoteMint, user, true, quoteTokenProgram);
  const [globalConfigInfo, feeConfigInfo, poolBase, poolQuote, userBase, userQuote] = await connection.getMultipleAccountsInfo(
    [GLOBAL_CONFIG_PDA, PUMP_AMM_FEE_CONFIG_PDA, pool.poolBaseTokenAccount, pool.poolQuoteTokenAccount, userBaseTokenAccount, userQuoteTokenAccount],
    'confirmed',
  );
  if (!globalConfigInfo || !poolBase || !poolQuote) throw new Error(`PumpSwap pool ${poolKey.toBase58()} is missing its config or token accounts`);
  const amount = (info: AccountInfo<Buffer>) => new BN(AccountLayout.decode(info.data.subarray(0, AccountLayout.span)).amount.toString());
  return {
    globalConfig: PUMP_AMM_SDK.decodeGlobalConfig(globalConfigInfo),
    feeConfig: feeConfigInfo ? PUMP_AMM_SDK.decodeFeeConfig(feeConfigInfo) : null,
    poolKey,
    poolAccountInfo,
    pool,
    poolBaseAmount: amount(poolBase),
    poolQuoteAmount: amount(poolQuote),
    baseTokenProgram: base.tokenProgram,
    quoteTokenProgram,
    baseMint: pool.baseMint,
    baseMintAccount: base.raw,
    user,
    userBaseTokenAccount,
    userQuoteTokenAccount,
    userBaseAccountInfo: userBase,
    userQuoteAccountInfo: userQuote,
  };
}

export const SOL_MINT = NATIVE_MINT;
