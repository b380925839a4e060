import { sql, type Kysely } from 'kysely';
import { treasuryFlowOf } from '@svc/domain';
import { sqlMigration } from '@svc/readmodel';
import { defineProjection, insertRows, unnestRows } from '../projection';
import { actionOf, number, object, text, tradeOf, type ActionEntry } from '../tokens/trades';

/** The candle widths kept, in milliseconds of the ledger's clock. */
export const CANDLE_INTERVALS = { '1m': 60_000, '5m': 300_000, '1h': 3_600_000 } as const;

export type CandleInterval = keyof typeof CANDLE_INTERVALS;

const INTERVALS = Object.entries(CANDLE_INTERVALS) as Array<[CandleInterval, number]>;

/** One trade as a candle takes it: the SOL and whole tokens it moved, its price in SOL per token, its lamports. */
export interface Fill {
  mint: string;
  seq: number;
  at: number;
  sol: number;
  tokens: number;
  price: number;
  lamports: number;
}

const fill = (mint: string, entry: ActionEntry, sol: number, tokens: number): Fill | undefined =>
  sol > 0 && tokens > 0 ? { mint, seq: entry.seq, at: entry.at, sol, tokens, price: sol / tokens, lamports: Math.round(sol * 1e9) } : undefined;

/**
 * A trade's fill. A buyback's record carries what the chain showed once it confirmed (`details.observed`, the
 * treasury's own arithmetic); a citizen's trade or a deploy's dev buy carries its quote, the amounts it was sent for.
 */
export function fillOf(entry: ActionEntry): Fill | undefined {
  const { data, details } = actionOf(entry);
  if (data.action === 'deploy') {
    const mint = text(details.mint);
    const devBuy = object(details.dev_buy);
    return mint ? fill(mint, entry, number(devBuy.sol), number(devBuy.quoted_tokens)) : undefined;
  }
  const trade = tradeOf(entry);
  if (!trade) return undefined;
  if (data.action === 'buyback' && details.observed && typeof details.decimals === 'number') {
    const flow = treasuryFlowOf(data);
    return fill(trade.mint, entry, Number(flow.spent_lamports) / 1e9, Number(flow.bought_raw) / 10 ** details.decimals);
  }
  return fill(trade.mint, entry, trade.sol, trade.tokens);
}

interface CandleRow {
  mint: string;
  width: CandleInterval;
  bucket: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume_lamports: number;
  trades: number;
  last_seq: number;
}

const COLUMNS = {
  mint: 'text',
  width: 'text',
  bucket: 'bigint',
  open: 'double precision',
  high: 'double precision',
  low: 'double precision',
  close: 'double precision',
  volume_lamports: 'bigint',
  trades: 'integer',
  last_seq: 'bigint',
} as const;

const keyOf = (row: Pick<CandleRow, 'mint' | 'width' | 'bucket'>) => `${row.mint} ${row.width} ${row.bucket}`;

/** The stored candles of the keys a batch touches, locked for the rest of the batch's transaction. */
async function storedCandles(trx: Kysely<any>, schema: string, keys: Array<Pick<CandleRow, 'mint' | 'width' | 'bucket'>>): Promise<Map<string, CandleRow>> {
  const { rows } = await sql<Record<string, string | number>>`
    select c.* from ${sql.raw(schema)}.candles c
    join ${unnestRows(keys, { mint: 'text', width: 'text', bucket: 'bigint' }, 'k')} on c.mint = k.mint and c.width = k.width and c.bucket = k.bucket
    order by c.mint, c.width, c.bucket
    for update of c`.execute(trx);
  const stored = rows.map((r): CandleRow => ({
    mint: String(r.mint),
    width: r.width as CandleInterval,
    bucket: Number(r.bucket),
    open: Number(r.open),
    high: Number(r.high),
    low: Number(r.low),
    close: Number(r.close),
    volume_lamports: Number(r.volume_lamports),
    trades: Number(r.trades),
    last_seq: Number(r.last_seq),
  }));
  return new Map(stored.map((row) => [keyOf(row), row]));
}

/**
 * OHLCV of every coin's trades per interval, in buckets of the ledger's `at` (when the trade was recorded), so a
 * rebuild draws the same candles. Open is the bucket's first trade by seq, close its last; volume in lamports.
 */
export const candlesProjection = defineProjection({
  name: 'candles',
  canHandle: ['ActionRecorded'],
  migrations: [
    sqlMigration('candles_001', (schema) => [
      `create table ${schema}.candles (
         mint text not null,
         width text not null,
         bucket bigint not null,
         open double precision not null,
         high double precision not null,
         low double precision not null,
         close double precision not null,
         volume_lamports bigint not null,
         trades integer not null,
         last_seq bigint not null,
         primary key (mint, width, bucket))`,
    ]),
  ],
  async apply(trx, schema, entries) {
    const fills = entries.map(({ entry }) => fillOf(entry)).filter((f): f is Fill => f !== undefined);
    if (fills.length === 0) return;
    const touched = fills.flatMap((f) => INTERVALS.map(([width, ms]) => ({ fill: f, mint: f.mint, width, bucket: Math.floor(f.at / ms) * ms })));
    const candles = await storedCandles(trx, schema, touched);
    const changed = new Map<string, CandleRow>();
    for (const { fill: f, ...key } of touched) {
      const id = keyOf(key);
      const was = candles.get(id);
      // A trade a candle already took (a batch applied again) changes nothing.
      if (was && f.seq <= was.last_seq) continue;
      const now: CandleRow = was
        ? { ...was, high: Math.max(was.high, f.price), low: Math.min(was.low, f.price), close: f.price, volume_lamports: was.volume_lamports + f.lamports, trades: was.trades + 1, last_seq: f.seq }
        : { ...key, open: f.price, high: f.price, low: f.price, close: f.price, volume_lamports: f.lamports, trades: 1, last_seq: f.seq };
      candles.set(id, now);
      changed.set(id, now);
    }
    if (changed.size === 0) return;
    const set = Object.keys(COLUMNS).map((c) => `${c} = excluded.${c}`).join(', ');
    await sql`${insertRows(`${schema}.candles`, [...changed.values()], COLUMNS)} on conflict (mint, width, bucket) do update set ${sql.raw(set)}`.execute(trx);
  },
});
