import BN from 'bn.js';
import { AccountInfo, PublicKey } from '@solana/web3.js';
import { AccountLayout, MintLayout, NATIVE_MINT, RawMint } from '@solana/spl-token';
import { BondingCurve, FeeConfig as CurveFeeConfig, GLOBAL_PDA, Global, PUMP_FEE_CONFIG_PDA, PUMP_PROGRAM_ID, PUMP_SDK, bondingCurvePda } from '@pump-fun/pump-sdk';
import {
  FeeConfig as PoolFeeConfig,
  GLOBAL_CONFIG_PDA,
  GlobalConfig,
  OFFLINE_PUMP_AMM_PROGRAM,
  PUMP_AMM_FEE_CONFIG_PDA,
  PUMP_AMM_PROGRAM_ID,
  PUMP_AMM_SDK,
  Pool,
} from '@pump-fun/pump-swap-sdk';
import type { AccountState } from '../runtime/program';

/** What the aggregator reads from the chain: the two LocalChain reads, so tests and tools can hand in any chain. */
export interface ChainReader {
  account(pubkey: PublicKey): AccountState | null;
  programAccounts(programId: PublicKey): { pubkey: PublicKey; account: AccountState }[];
}

export const SOL_MINT = NATIVE_MINT;

export interface MintInfo {
  address: PublicKey;
  tokenProgram: PublicKey;
  raw: RawMint;
}

/** A pump coin still trading on its bonding curve, against SOL. */
export interface CurveVenue {
  kind: 'curve';
  mint: MintInfo;
  address: PublicKey;
  info: AccountInfo<Buffer>;
  curve: BondingCurve;
  global: Global;
  feeConfig: CurveFeeConfig | null;
}

/** A PumpSwap constant-product pool, as the swap SDK's `SwapSolanaState` needs it. */
export interface PoolVenue {
  kind: 'pool';
  address: PublicKey;
  info: AccountInfo<Buffer>;
  pool: Pool;
  globalConfig: GlobalConfig;
  feeConfig: PoolFeeConfig | null;
  base: MintInfo;
  quote: MintInfo;
  baseReserve: BN;
  quoteReserve: BN;
}

export type Venue = CurveVenue | PoolVenue;

const POOL_DISCRIMINATOR = Buffer.from(OFFLINE_PUMP_AMM_PROGRAM.idl.accounts!.find((a) => a.name === 'pool')!.discriminator);

export function accountInfo(chain: ChainReader, pubkey: PublicKey): AccountInfo<Buffer> | null {
  const state = chain.account(pubkey);
  return state && { data: state.data, owner: state.owner, lamports: Number(state.lamports), executable: state.executable };
}

export function readMint(chain: ChainReader, address: PublicKey): MintInfo | null {
  const state = chain.account(address);
  if (!state || state.data.length < MintLayout.span) return null;
  const raw = MintLayout.decode(state.data.subarray(0, MintLayout.span));
  return raw.isInitialized ? { address, tokenProgram: state.owner, raw } : null;
}

function tokenAmount(chain: ChainReader, address: PublicKey): BN | null {
  const state = chain.account(address);
  if (!state || state.data.length < AccountLayout.span) return null;
  return new BN(AccountLayout.decode(state.data.subarray(0, AccountLayout.span)).amount.toString());
}

/** The curve of `mint` when it is a pump coin that has not graduated; null otherwise. */
export function curveVenue(chain: ChainReader, mint: PublicKey): CurveVenue | null {
  const address = bondingCurvePda(mint);
  const info = accountInfo(chain, address);
  if (!info || !info.owner.equals(PUMP_PROGRAM_ID)) return null;
  const curve = PUMP_SDK.decodeBondingCurve(info);
  if (curve.complete || curve.virtualTokenReserves.isZero()) return null;
  if (!curve.quoteMint.equals(PublicKey.default) && !curve.quoteMint.equals(SOL_MINT)) return null;
  const globalInfo = accountInfo(chain, GLOBAL_PDA);
  const mintInfo = readMint(chain, mint);
  if (!globalInfo || !mintInfo) return null;
  const feeInfo = accountInfo(chain, PUMP_FEE_CONFIG_PDA);
  return {
    kind: 'curve',
    mint: mintInfo,
    address,
    info,
    curve,
    global: PUMP_SDK.decodeGlobal(globalInfo),
    feeConfig: feeInfo ? PUMP_SDK.decodeFeeConfig(feeInfo) : null,
  };
}

export function poolVenueAt(chain: ChainReader, address: PublicKey): PoolVenue | null {
  const info = accountInfo(chain, address);
  if (!info || !info.owner.equals(PUMP_AMM_PROGRAM_ID) || !info.data.subarray(0, 8).equals(POOL_DISCRIMINATOR)) return null;
  return openPool(chain, address, info, PUMP_AMM_SDK.decodePool(info));
}

function openPool(chain: ChainReader, address: PublicKey, info: AccountInfo<Buffer>, pool: Pool): PoolVenue | null {
  const globalInfo = accountInfo(chain, GLOBAL_CONFIG_PDA);
  const base = readMint(chain, pool.baseMint);
  const quote = readMint(chain, pool.quoteMint);
  const baseReserve = tokenAmount(chain, pool.poolBaseTokenAccount);
  const quoteReserve = tokenAmount(chain, pool.poolQuoteTokenAccount);
  if (!globalInfo || !base || !quote || !baseReserve || !quoteReserve || baseReserve.isZero() || quoteReserve.isZero()) return null;
  const feeInfo = accountInfo(chain, PUMP_AMM_FEE_CONFIG_PDA);
  return {
    kind: 'pool',
    address,
    info,
    pool,
    globalConfig: PUMP_AMM_SDK.decodeGlobalConfig(globalInfo),
    feeConfig: feeInfo ? PUMP_AMM_SDK.decodeFeeConfig(feeInfo) : null,
    base,
    quote,
    baseReserve,
    quoteReserve,
  };
}

/** Every live PumpSwap pool that trades `a` against `b`, in either orientation. */
export function poolsBetween(chain: ChainReader, a: PublicKey, b: PublicKey): PoolVenue[] {
  const venues: PoolVenue[] = [];
  for (const { pubkey, account } of chain.programAccounts(PUMP_AMM_PROGRAM_ID)) {
    if (!account.data.subarray(0, 8).equals(POOL_DISCRIMINATOR)) continue;
    const info = { data: account.data, owner: account.owner, lamports: Number(account.lamports), executable: account.executable };
    const pool = PUMP_AMM_SDK.decodePool(info);
    const pair = (pool.baseMint.equals(a) && pool.quoteMint.equals(b)) || (pool.baseMint.equals(b) && pool.quoteMint.equals(a));
    if (!pair) continue;
    const venue = openPool(chain, pubkey, info, pool);
    if (venue) venues.push(venue);
  }
  return venues;
}

/** The deepest pool by constant product: the one a single-hop router would pick for most sizes. */
export function deepestPool(pools: readonly PoolVenue[]): PoolVenue | null {
  let best: PoolVenue | null = null;
  for (const pool of pools) if (!best || pool.baseReserve.mul(pool.quoteReserve).gt(best.baseReserve.mul(best.quoteReserve))) best = pool;
  return best;
}

/**
 * Where a swap between two mints executes: the bonding curve while a pump coin is on it (trading against SOL),
 * otherwise the deepest PumpSwap pool holding both mints.
 */
export function findVenue(chain: ChainReader, inputMint: PublicKey, outputMint: PublicKey): Venue | null {
  const coin = inputMint.equals(SOL_MINT) ? outputMint : outputMint.equals(SOL_MINT) ? inputMint : null;
  const curve = coin && curveVenue(chain, coin);
  if (curve) return curve;
  return deepestPool(poolsBetween(chain, inputMint, outputMint));
}

/** The venue a quote named by its `ammKey`, as it stands now. */
export function venueAt(chain: ChainReader, ammKey: PublicKey, inputMint: PublicKey, outputMint: PublicKey): Venue | null {
  const coin = inputMint.equals(SOL_MINT) ? outputMint : outputMint.equals(SOL_MINT) ? inputMint : null;
  if (coin && bondingCurvePda(coin).equals(ammKey)) return curveVenue(chain, coin);
  const pool = poolVenueAt(chain, ammKey);
  if (!pool) return null;
  const { baseMint, quoteMint } = pool.pool;
  const matches = (baseMint.equals(inputMint) && quoteMint.equals(outputMint)) || (baseMint.equals(outputMint) && quoteMint.equals(inputMint));
  return matches ? pool : null;
}
