import { randomUUID } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { sql } from 'kysely';
import type { ActionName } from '@svc/domain';
import { GENESIS_HASH, LEDGER_STREAM, PostgresEventStore, sealAndEncode } from '@svc/ledger';
import { Projector, candles, projections, rebuildOneReadModel, rebuildReadModels, type Projection } from '@svc/projections';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

const WSOL = 'So11111111111111111111111111111111111111112';
const key = () => Keypair.generate().publicKey.toBase58();
const [COIN, OTHER, QUIET] = [key(), key(), key()];
const candlesProjection = projections.find((p) => p.name === 'candles') as Projection;

/** 2026-01-01T00:00:00Z: a whole hour, so the buckets below start where the comments say. */
const T0 = Date.UTC(2026, 0, 1);
const MIN = 60_000;

const buy = (mint: string, sol: number, tokens: number) => ['buy', { mint, venue: 'pump', spent_sol: sol, quoted_tokens: tokens, min_tokens: tokens * 0.95 }] as const;
const sell = (mint: string, tokens: number, sol: number) => ['sell', { mint, venue: 'pump', sold_tokens: tokens, quoted_sol: sol, min_sol: sol * 0.95 }] as const;

/** What the ledger holds, each trade with the time it was recorded (ms after T0). */
const LEDGER: Array<readonly [at: number, action: ActionName, details: Record<string, unknown>]> = [
  // A deploy with a dev buy of 0.1 SOL for 4,000,000 tokens: price 2.5e-8.
  [0, 'deploy', { mint: COIN, name: 'Coin', symbol: 'C', dev_buy: { sol: 0.1, quoted_tokens: 4_000_000, min_tokens: 3_800_000 }, fee_share: { status: 'off', shares: [] } }],
  [10_000, ...buy(COIN, 0.2, 5_000_000)], // 4e-8
  [20_000, ...sell(COIN, 1_000_000, 0.03)], // 3e-8
  [59_999, ...buy(COIN, 0.05, 2_500_000)], // 2e-8, last of minute 0
  [MIN, ...buy(COIN, 0.6, 10_000_000)], // 6e-8, first of minute 1
  // A swap from SOL into the coin, and one back out: trades too.
  [MIN + 1_000, 'swap', { input_mint: WSOL, output_mint: COIN, in_amount: 0.1, quoted_out: 2_000_000 }], // 5e-8
  [2 * MIN + 5_000, 'swap', { input_mint: COIN, output_mint: WSOL, in_amount: 1_000_000, quoted_out: 0.045 }], // 4.5e-8
  // Not trades: a token-to-token swap, a burn, a transfer, a buy of nothing.
  [2 * MIN + 6_000, 'swap', { input_mint: COIN, output_mint: OTHER, in_amount: 1, quoted_out: 1 }],
  [2 * MIN + 7_000, 'burn', { mint: COIN, burned_raw: '5' }],
  [2 * MIN + 8_000, 'transfer', { mint: COIN, amount: 3 }],
  [2 * MIN + 9_000, 'buy', { mint: COIN, spent_sol: 0, quoted_tokens: 0 }],
  // Minute 5 (a new 5m bucket); the treasury's buyback counts what the chain showed: 0.3 SOL for 4,000,000.000000 tokens.
  [5 * MIN + 30_000, 'buyback', { mint: COIN, decimals: 6, spent_sol: 0.31, quoted_tokens: 1, observed: { fee_lamports: 5_000, sol_change_lamports: -300_105_000, rent_lamports: 100_000, token_change_raw: '4000000000000' } }], // 7.5e-8
  // An hour later (a new 1h bucket), and another coin in between.
  [61 * MIN, ...sell(COIN, 2_000_000, 0.02)], // 1e-8
  [61 * MIN + 1, ...buy(OTHER, 1, 1_000)], // 1e-3
];

/** The entries for `actor` at T0 + each time, as the ledger stream stores them. */
async function appendLedger(store: PostgresEventStore): Promise<void> {
  let prev = GENESIS_HASH;
  const events = LEDGER.map(([at, action, details], seq) => {
    const sealed = sealAndEncode(prev, { seq, type: 'ActionRecorded', at: T0 + at, actor: 'agent_1', data: { action, signature: `SIG_${seq}`, wallet: 'W1', details } });
    prev = sealed.entry.hash;
    return { id: randomUUID(), type: 'ActionRecorded', data: sealed.bytes };
  });
  await store.append(LEDGER_STREAM, events, 'no_stream');
}

/** Each trade's price as SOL over whole tokens. */
const P = {
  dev: 0.1 / 4_000_000,
  buy1: 0.2 / 5_000_000,
  buy2: 0.05 / 2_500_000,
  buy3: 0.6 / 10_000_000,
  swapIn: 0.1 / 2_000_000,
  swapOut: 0.045 / 1_000_000,
  buyback: 0.3 / 4_000_000,
  sell2: 0.02 / 2_000_000,
  other: 1 / 1_000,
};

const candle = (t: number, open: number, high: number, low: number, close: number, volume_sol: number, trades: number) => ({ t: (T0 + t) / 1000, open, high, low, close, volume_sol, trades });

async function rows(database: SqlDatabase, schema: string): Promise<unknown[]> {
  return (await sql.raw(`select * from ${schema}.candles order by mint, width, bucket`).execute(database.db)).rows;
}

describe('the candles read model', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: PostgresEventStore;

  beforeAll(async () => {
    db = await freshDatabase('candles_rm');
    database = await openDatabase({ url: db.url, dataDir: tempDir('candles-rm') });
    store = await new PostgresEventStore(database).init();
    await appendLedger(store);
    // Batches of 3 entries: candles are built across batches, as the live projector builds them.
    const projector = await new Projector({ database, store, projections: [candlesProjection], schema: 'rm', batchSize: 3 }).init();
    await projector.catchUp();
  });
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await db?.drop();
  });

  it('draws 1m candles per bucket of the recorded time: open first, close last, volume in SOL', async () => {
    expect(await candles.candlesOf(database.db, 'rm', COIN, '1m', 1000)).toEqual([
      candle(0, P.dev, P.buy1, P.buy2, P.buy2, 0.38, 4),
      candle(MIN, P.buy3, P.buy3, P.swapIn, P.swapIn, 0.7, 2),
      candle(2 * MIN, P.swapOut, P.swapOut, P.swapOut, P.swapOut, 0.045, 1),
      candle(5 * MIN, P.buyback, P.buyback, P.buyback, P.buyback, 0.3, 1),
      candle(61 * MIN, P.sell2, P.sell2, P.sell2, P.sell2, 0.02, 1),
    ]);
  });

  it('draws 5m and 1h candles from the same trades', async () => {
    expect(await candles.candlesOf(database.db, 'rm', COIN, '5m', 1000)).toEqual([
      candle(0, P.dev, P.buy3, P.buy2, P.swapOut, 1.125, 7),
      candle(5 * MIN, P.buyback, P.buyback, P.buyback, P.buyback, 0.3, 1),
      candle(60 * MIN, P.sell2, P.sell2, P.sell2, P.sell2, 0.02, 1),
    ]);
    expect(await candles.candlesOf(database.db, 'rm', COIN, '1h', 1000)).toEqual([
      candle(0, P.dev, P.buyback, P.buy2, P.buyback, 1.425, 8),
      candle(60 * MIN, P.sell2, P.sell2, P.sell2, P.sell2, 0.02, 1),
    ]);
    expect(await candles.candlesOf(database.db, 'rm', OTHER, '1h', 1000)).toEqual([candle(60 * MIN, P.other, P.other, P.other, P.other, 1, 1)]);
  });

  it('answers the newest `limit` candles, oldest first, and none for a coin without trades', async () => {
    expect((await candles.candlesOf(database.db, 'rm', COIN, '1m', 2)).map((c) => c.t)).toEqual([(T0 + 5 * MIN) / 1000, (T0 + 61 * MIN) / 1000]);
    expect(await candles.candlesOf(database.db, 'rm', QUIET, '1m', 300)).toEqual([]);
  });

  it('applies the same batch twice with the same rows as once', async () => {
    const once = await rows(database, 'rm');
    const batch = await store.readForward(LEDGER_STREAM, 0, 100);
    await sql`update rm.checkpoints set seq = -1 where name = 'candles'`.execute(database.db);
    const projector = await new Projector({ database, store, projections: [candlesProjection], schema: 'rm' }).init();
    await projector.applyBatch(batch.slice(0, 6));
    await projector.applyBatch(batch);
    expect(await rows(database, 'rm')).toEqual(once);
  });

  it('rebuilds the same candles, alone or with every read model, in batches of any size', async () => {
    const once = await rows(database, 'rm');
    await rebuildOneReadModel({ database, store, projection: candlesProjection, schema: 'rm', batchSize: 5 });
    expect(await rows(database, 'rm')).toEqual(once);
    await rebuildReadModels({ database, store, projections, schema: 'rm' });
    expect(await rows(database, 'rm')).toEqual(once);
  });
});
