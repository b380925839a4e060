import type { Kysely } from 'kysely';
import type { CandleInterval } from './candles.projection';

/** One candle as the API and the board show it: `t` its bucket's start in unix seconds, prices in SOL per whole token. */
export interface Candle {
  t: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume_sol: number;
  trades: number;
}

/** A coin's newest `limit` candles of `interval`, oldest first; none for a coin without trades. */
export async function candlesOf(db: Kysely<any>, schema: string, mint: string, interval: CandleInterval, limit: number): Promise<Candle[]> {
  const rows = await db
    .selectFrom(`${schema}.candles`)
    .select(['bucket', 'open', 'high', 'low', 'close', 'volume_lamports', 'trades'])
    .where('mint', '=', mint)
    .where('width', '=', interval)
    .orderBy('bucket', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse().map((r) => ({
    t: Number(r.bucket) / 1000,
    open: Number(r.open),
    high: Number(r.high),
    low: Number(r.low),
    close: Number(r.close),
    volume_sol: Number(r.volume_lamports) / 1e9,
    trades: Number(r.trades),
  }));
}
