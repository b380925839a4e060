import { PublicKey, type AccountInfo, type Connection } from '@solana/web3.js';
import { AccountLayout, NATIVE_MINT } from '@solana/spl-token';
import { GLOBAL_PDA, PUMP_SDK, bondingCurvePda, canonicalPumpPoolPda, type BondingCurve, type Global } from '@pump-fun/pump-sdk';
import { PUMP_AMM_SDK } from '@pump-fun/pump-swap-sdk';
import { rawToUi } from '../tokens';
import { decodeMint } from './market';
import { isPumpPool } from './pumpAmm';
import { awaitsMigration, type MintState, type VenueName } from './venue';

/** getMultipleAccountsInfo takes at most 100 keys a call. */
export const ACCOUNTS_PER_CALL = 100;
/** Calls in flight at once for one read, so a long list of mints does not flood the RPC. */
const CALLS_AT_ONCE = 8;
const SOL_DECIMALS = 9;

/** A curve's reserves in whole units: tokens, and SOL (the curve's quote). */
export interface CurveReserves {
  virtualTokenReserves: number;
  virtualSolReserves: number;
  realTokenReserves: number;
  realSolReserves: number;
}

/** A PumpSwap pool's reserves in whole units: the coin (base) and SOL (quote). */
export interface PoolReserves {
  address: string;
  baseReserve: number;
  quoteReserve: number;
  /** SOL the pool prices with beyond what it holds (zero on a plain pool). */
  virtualQuoteReserve: number;
}

/** A mint's market as the chain holds it, in plain numbers: whole tokens, SOL, SOL per whole token. */
export interface MarketState {
  mint: string;
  /** `pump` for a complete curve awaiting its migration too (marketStatus tells it apart). */
  venue: VenueName;
  tokenProgram: string;
  decimals: number;
  /** Whole tokens in circulation. */
  supply: number;
  /** The pump curve's address, when the mint has one (on it, complete, or graduated). */
  bondingCurve: string | null;
  /** The creator the curve (or the pool) records. */
  creator: string | null;
  curve: CurveReserves | null;
  /** The curve is complete: bought out, graduated or awaiting migration. */
  complete: boolean;
  mayhem: boolean;
  pool: PoolReserves | null;
  /** SOL per whole token at the venue's spot price; null when no pump venue prices it. */
  priceSol: number | null;
  marketCapSol: number | null;
  /** 0-1: how much of the curve's sellable tokens are sold; 1 once complete; null without a curve. */
  progress: number | null;
}

export interface MarketStates {
  /** The lowest slot the reads answered at: every state is at least this recent. */
  slot: number;
  /** By mint (base58): null when the address is not a mint of either token program. */
  states: Map<string, MarketState | null>;
}

export interface Accounts {
  slot: number;
  infos: Array<AccountInfo<Buffer> | null>;
  /** getMultipleAccounts calls made. */
  calls: number;
}

/** Accounts of `keys` in order, 100 keys a call, a few calls at a time; the slot is the lowest any call answered at. */
export async function readAccounts(connection: Connection, keys: PublicKey[]): Promise<Accounts> {
  const calls: PublicKey[][] = [];
  for (let i = 0; i < keys.length; i += ACCOUNTS_PER_CALL) calls.push(keys.slice(i, i + ACCOUNTS_PER_CALL));
  const answers: Array<{ context: { slot: number }; value: Array<AccountInfo<Buffer> | null> }> = new Array(calls.length);
  let next = 0;
  const worker = async () => {
    while (next < calls.length) {
      const i = next++;
      answers[i] = await connection.getMultipleAccountsInfoAndContext(calls[i]!, 'confirmed');
    }
  };
  await Promise.all(Array.from({ length: Math.min(CALLS_AT_ONCE, calls.length) }, worker));
  return { slot: answers.reduce((low, a) => Math.min(low, a.context.slot), Number.MAX_SAFE_INTEGER), infos: answers.flatMap((a) => a.value), calls: calls.length };
}

const big = (n: { toString(): string }) => BigInt(n.toString());
const tokenAmount = (info: AccountInfo<Buffer>) => AccountLayout.decode(info.data.subarray(0, AccountLayout.span)).amount;
/** SOL per whole token: quote lamports over base units, each scaled to whole units. */
const spotPrice = (lamports: bigint, baseUnits: bigint, decimals: number) => (baseUnits > 0n ? rawToUi(lamports, SOL_DECIMALS) / rawToUi(baseUnits, decimals) : null);

function curveReserves(curve: BondingCurve, decimals: number): CurveReserves {
  return {
    virtualTokenReserves: rawToUi(big(curve.virtualTokenReserves), decimals),
    virtualSolReserves: rawToUi(big(curve.virtualQuoteReserves), SOL_DECIMALS),
    realTokenReserves: rawToUi(big(curve.realTokenReserves), decimals),
    realSolReserves: rawToUi(big(curve.realQuoteReserves), SOL_DECIMALS),
  };
}

function curveProgress(curve: BondingCurve, global: Global | null): number | null {
  if (curve.complete) return 1;
  const initial = global ? big(global.initialRealTokenReserves) : 0n;
  if (initial <= 0n) return null;
  return Math.min(1, Math.max(0, 1 - Number(big(curve.realTokenReserves)) / Number(initial)));
}

interface Found {
  mint: MintState;
  curveAddress: PublicKey;
  curve: BondingCurve | null;
  pool?: { address: PublicKey; decoded: ReturnType<typeof PUMP_AMM_SDK.decodePool> };
}

function toState(found: Found, global: Global | null, poolAmounts?: { base: bigint; quote: bigint }): MarketState {
  const { mint, curve } = found;
  const decimals = mint.decimals;
  const supply = rawToUi(mint.supply, decimals);
  const common = {
    mint: mint.address.toBase58(),
    tokenProgram: mint.tokenProgram.toBase58(),
    decimals,
    supply,
    bondingCurve: curve ? found.curveAddress.toBase58() : null,
  };
  const withCap = (priceSol: number | null) => ({ priceSol, marketCapSol: priceSol === null ? null : priceSol * supply });
  if (curve && !curve.complete && global) {
    return {
      ...common,
      venue: 'pump',
      creator: curve.creator.toBase58(),
      curve: curveReserves(curve, decimals),
      complete: false,
      mayhem: curve.isMayhemMode,
      pool: null,
      ...withCap(spotPrice(big(curve.virtualQuoteReserves), big(curve.virtualTokenReserves), decimals)),
      progress: curveProgress(curve, global),
    };
  }
  if (found.pool && poolAmounts) {
    const { decoded } = found.pool;
    const virtualQuote = decoded.virtualQuoteReserves ? big(decoded.virtualQuoteReserves) : 0n;
    const solQuoted = decoded.quoteMint.equals(NATIVE_MINT);
    return {
      ...common,
      venue: 'pump-amm',
      creator: (curve?.creator ?? decoded.coinCreator).toBase58(),
      curve: curve ? curveReserves(curve, decimals) : null,
      complete: true,
      mayhem: curve?.isMayhemMode ?? decoded.isMayhemMode,
      pool: {
        address: found.pool.address.toBase58(),
        baseReserve: rawToUi(poolAmounts.base, decimals),
        quoteReserve: rawToUi(poolAmounts.quote, SOL_DECIMALS),
        virtualQuoteReserve: rawToUi(virtualQuote, SOL_DECIMALS),
      },
      // The pool prices with its virtual quote on top of what it holds, as the swap SDK's math does.
      ...withCap(solQuoted ? spotPrice(poolAmounts.quote + virtualQuote, poolAmounts.base, decimals) : null),
      progress: 1,
    };
  }
  // A complete curve still waiting for its migration stays pump's, at its last price, until its pool exists: the
  // aggregator has no route for it. Any other mint is the aggregator's, with no price here.
  return {
    ...common,
    venue: curve && awaitsMigration(curve) ? 'pump' : 'jupiter',
    creator: curve ? curve.creator.toBase58() : null,
    curve: curve ? curveReserves(curve, decimals) : null,
    complete: curve?.complete ?? false,
    mayhem: curve?.isMayhemMode ?? false,
    pool: null,
    ...withCap(curve ? spotPrice(big(curve.virtualQuoteReserves), big(curve.virtualTokenReserves), decimals) : null),
    progress: curve ? curveProgress(curve, global) : null,
  };
}

/**
 * Many mints' markets in a few batched reads: each mint, its pump curve and its canonical PumpSwap pool (with
 * pump's Global once) 100 keys a call, then the token accounts of the pools found. The venue is chosen as
 * readMarket chooses it: the curve while the coin is on it or migrating off it, its pool once it graduated, else
 * the aggregator.
 */
export async function readMarketStates(connection: Connection, mints: Iterable<PublicKey | string>): Promise<MarketStates> {
  const keys = [...new Set([...mints].map((m) => (typeof m === 'string' ? m : m.toBase58())))].map((m) => new PublicKey(m));
  const states = new Map<string, MarketState | null>();
  if (keys.length === 0) return { slot: 0, states };
  const first = await readAccounts(connection, [GLOBAL_PDA, ...keys.flatMap((mint) => [mint, bondingCurvePda(mint), canonicalPumpPoolPda(mint)])]);
  const globalInfo = first.infos[0];
  const global = globalInfo ? PUMP_SDK.decodeGlobal(globalInfo) : null;
  const found: Found[] = [];
  keys.forEach((address, i) => {
    const [mintInfo, curveInfo, poolInfo] = first.infos.slice(1 + 3 * i, 4 + 3 * i);
    const mint = decodeMint(address, mintInfo ?? null);
    if (!mint) {
      states.set(address.toBase58(), null);
      return;
    }
    const curveAddress = bondingCurvePda(address);
    const curve = curveInfo ? PUMP_SDK.decodeBondingCurveNullable(curveInfo) : null;
    const onCurve = curve !== null && !curve.complete && global !== null;
    const pool = !onCurve && isPumpPool(poolInfo) ? { address: canonicalPumpPoolPda(address), decoded: PUMP_AMM_SDK.decodePool(poolInfo) } : undefined;
    found.push({ mint, curveAddress, curve, pool });
  });
  const pooled = found.filter((f) => f.pool);
  let slot = first.slot;
  const amounts = new Map<Found, { base: bigint; quote: bigint }>();
  if (pooled.length > 0) {
    const second = await readAccounts(
      connection,
      pooled.flatMap((f) => [f.pool!.decoded.poolBaseTokenAccount, f.pool!.decoded.poolQuoteTokenAccount]),
    );
    slot = Math.min(slot, second.slot);
    pooled.forEach((f, i) => {
      const [base, quote] = [second.infos[2 * i], second.infos[2 * i + 1]];
      if (base && quote) amounts.set(f, { base: tokenAmount(base), quote: tokenAmount(quote) });
    });
  }
  for (const f of found) states.set(f.mint.address.toBase58(), toState(f, global, amounts.get(f)));
  return { slot, states };
}
