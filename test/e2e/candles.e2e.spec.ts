import { randomBytes } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LEDGER_STREAM, type LedgerEntry } from '@svc/ledger';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { call } from '../support/http';
import { ledgerEntries } from '../support/ledger';
import { callTool, connectMcp, wordsInPlace } from '../support/mcp';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const WIDTHS = { '1m': 60_000, '5m': 300_000, '1h': 3_600_000 } as const;

/** A trade of the coin as its ledger record tells it: when it was recorded, SOL moved, whole tokens moved. */
interface RecordedTrade {
  at: number;
  sol: number;
  tokens: number;
}

function tradeOf(entry: LedgerEntry, mint: string): RecordedTrade | undefined {
  if (entry.type !== 'ActionRecorded') return undefined;
  const { action, details } = entry.data as { action: string; details: Record<string, any> };
  if (details.mint !== mint) return undefined;
  if (action === 'deploy' && details.dev_buy.sol > 0) return { at: entry.at, sol: details.dev_buy.sol, tokens: details.dev_buy.quoted_tokens };
  if (action === 'buy') return { at: entry.at, sol: details.spent_sol, tokens: details.quoted_tokens };
  if (action === 'sell') return { at: entry.at, sol: details.quoted_sol, tokens: details.sold_tokens };
  return undefined;
}

/** The candles a reader of the ledger draws from the trades, bucketed by the time each was recorded. */
function drawn(trades: RecordedTrade[], width: number) {
  const buckets = new Map<number, RecordedTrade[]>();
  for (const trade of trades) {
    const start = Math.floor(trade.at / width) * width;
    buckets.set(start, [...(buckets.get(start) ?? []), trade]);
  }
  return [...buckets].map(([start, inBucket]) => {
    const prices = inBucket.map((t) => t.sol / t.tokens);
    return {
      t: start / 1000,
      open: prices[0],
      high: Math.max(...prices),
      low: Math.min(...prices),
      close: prices.at(-1),
      volume_sol: expect.closeTo(inBucket.reduce((sum, t) => sum + t.sol, 0), 9),
      trades: inBucket.length,
    };
  });
}

/**
 * A coin's candles over HTTP and MCP, drawn from real trades on the bundled chain: a deploy with a dev buy, buys and
 * a sell through the API, compared with what a reader of the ledger draws from the same records.
 */
describe('candles: GET /api/v1/tokens/{mint}/candles and svc_candles', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;
  let trader: TestCitizen;
  let mint: string;
  let mcp: Client;

  beforeAll(async () => {
    db = await freshDatabase('candles_e2e');
    server = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('candles-e2e'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
      { outboxRecoveryEveryMs: 3_600_000 },
    );
    base = server.url;
    trader = await registerCitizen(base, 'candle');
    await airdrop(server.services.chain.connection, trader.wallet, 5);
    mcp = await connectMcp(base, '/mcp/read');
  }, 60_000);
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
    await db?.drop();
  });

  const post = (path: string, body: Record<string, unknown>) => call(base, 'POST', path, { key: trader.key, body });
  const candlesOf = (coin: string, query = '') => call(base, 'GET', `/api/v1/tokens/${coin}/candles${query}`);

  it('draws the trades of a coin as the ledger recorded them, in every interval, over HTTP and MCP alike', async () => {
    const deployed = await post('/api/v1/tokens/deploy', { name: 'Candle Coin', symbol: 'CNDL', image: PNG, dev_buy_sol: 0.05 });
    expect(deployed.status).toBe(201);
    mint = deployed.body.mint;
    for (const amount_sol of [0.1, 0.3, 0.2]) expect((await post('/api/v1/tokens/buy', { mint, amount_sol })).status).toBe(200);
    expect((await post('/api/v1/tokens/sell', { mint, percent: 40 })).status).toBe(200);
    const head = await server.services.store.headRevision(LEDGER_STREAM);
    expect(await server.services.projection.waitFor(head, 10_000, ['candles'])).toBe(true);

    const trades = (await ledgerEntries(base)).map((entry) => tradeOf(entry, mint)).filter((t): t is RecordedTrade => t !== undefined);
    expect(trades).toHaveLength(5);
    for (const [interval, width] of Object.entries(WIDTHS)) {
      const res = await candlesOf(mint, `?interval=${interval}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, mint, interval, candles: drawn(trades, width) });
      const tool = await callTool(base, mcp, 'svc_candles', { mint, interval });
      expect(wordsInPlace(tool.structuredContent)).toEqual(res.body);
    }
    // The defaults: 1m, and the newest 300.
    const byDefault = await candlesOf(mint);
    expect(byDefault.body).toEqual({ ok: true, mint, interval: '1m', candles: drawn(trades, WIDTHS['1m']) });
    const newest = await candlesOf(mint, '?limit=1');
    expect(newest.body.candles).toEqual(byDefault.body.candles.slice(-1));
  });

  it('answers a mint without trades with no candles, and refuses a malformed mint, interval or limit', async () => {
    const quiet = Keypair.generate().publicKey.toBase58();
    expect((await candlesOf(quiet)).body).toEqual({ ok: true, mint: quiet, interval: '1m', candles: [] });
    const bad = await candlesOf('not-a-key');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_pubkey' });
    for (const [query, field] of [['?interval=2m', 'interval'], ['?limit=0', 'limit'], ['?limit=1001', 'limit']] as const) {
      const res = await candlesOf(quiet, query);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', field });
    }
  });
});
