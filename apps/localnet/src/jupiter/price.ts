import { PublicKey } from '@solana/web3.js';
import { ChainReader, SOL_MINT, curveVenue, deepestPool, poolsBetween, readMint } from './venues';

export interface TokenPrice {
  usdPrice: number;
  blockId: number;
  decimals: number;
  /** The localnet keeps no price history. */
  priceChange24h: null;
  /** USD value of both sides of the market the price comes from; SOL's own price comes from the option, not a market. */
  liquidity?: number;
}

const SOL_DECIMALS = 9;

/** Spot price in SOL of one whole token and the SOL depth behind it, from its curve or its deepest SOL pool. */
function solSpot(chain: ChainReader, mint: PublicKey, decimals: number): { sol: number; solDepth: number } | null {
  const curve = curveVenue(chain, mint);
  if (curve) {
    const { virtualQuoteReserves: vQ, virtualTokenReserves: vT, realQuoteReserves } = curve.curve;
    return { sol: (Number(vQ.toString()) / Number(vT.toString())) * 10 ** (decimals - SOL_DECIMALS), solDepth: Number(realQuoteReserves.toString()) / 1e9 };
  }
  const pool = deepestPool(poolsBetween(chain, mint, SOL_MINT));
  if (!pool) return null;
  const quote = Number(pool.quoteReserve.add(pool.pool.virtualQuoteReserves).toString());
  const base = Number(pool.baseReserve.toString());
  const scale = 10 ** (pool.base.raw.decimals - pool.quote.raw.decimals);
  if (pool.pool.baseMint.equals(mint)) return { sol: (quote / base) * scale, solDepth: Number(pool.quoteReserve.toString()) / 1e9 };
  return { sol: (base / quote) / scale, solDepth: Number(pool.baseReserve.toString()) / 1e9 };
}

/** Jupiter's Price API V3 entry for one mint, or null when the localnet has no market to price it from. */
export function priceOf(chain: ChainReader, mint: PublicKey, solUsd: number, slot: number): TokenPrice | null {
  if (mint.equals(SOL_MINT)) return { usdPrice: solUsd, blockId: slot, decimals: SOL_DECIMALS, priceChange24h: null };
  const info = readMint(chain, mint);
  if (!info) return null;
  const spot = solSpot(chain, mint, info.raw.decimals);
  if (!spot || !Number.isFinite(spot.sol)) return null;
  return { usdPrice: spot.sol * solUsd, blockId: slot, decimals: info.raw.decimals, priceChange24h: null, liquidity: 2 * spot.solDepth * solUsd };
}
