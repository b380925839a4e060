import { randomBytes } from 'node:crypto';
import { Keypair, PublicKey, type Connection } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, createMint, getAccount, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { OnlinePumpSdk, bondingCurvePda, canonicalPumpPoolPda } from '@pump-fun/pump-sdk';
import type { MarketRefresh } from '@svc/app-workers';
import { rawToUi } from '@svc/chain';
import { LEDGER_STREAM } from '@svc/ledger';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { airdrop, registerCitizen } from '../support/citizens';
import { call } from '../support/http';

interface Citizen {
  id: string;
  handle: string;
  key: string;
  wallet: string;
}

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
/** The bundled chain's SOL/USD (LOCALNET_SOL_USD's default). */
const SOL_USD = 150;
const big = (n: { toString(): string }) => BigInt(n.toString());

/**
 * The coins launched through the service as any client sees them: listed newest first, each with a page that
 * joins what the ledger recorded (who deployed it, its links, its sharing, its trades, the posts about it) with
 * what the chain holds (venue, price, market cap, progress, reserves, pool), checked against the pump SDKs'
 * own decoding. Chain figures are fresh on the first read after a trade; the refresher's own pass is waited
 * for through its hook, never with a sleep.
 */
describe('token pages: GET /api/v1/tokens and GET /api/v1/tokens/{mint}', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;
  let pump: OnlinePumpSdk;
  const refreshes: MarketRefresh[] = [];
  const onRefresh = new Set<() => void>();

  beforeAll(async () => {
    db = await freshDatabase('tokens_e2e');
    server = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('tokens-e2e'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
      {
        outboxRecoveryEveryMs: 3_600_000,
        markets: {
          onRefreshed: (refresh) => {
            refreshes.push(refresh);
            for (const wake of onRefresh) wake();
          },
        },
      },
    );
    base = server.url;
    pump = new OnlinePumpSdk(connection());
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const connection = (): Connection => server.services.chain.connection;

  /** Resolves once the refresher saved a reading of `mint` that includes the ledger up to `seq`. */
  function refreshedPast(mint: string, seq: number): Promise<MarketRefresh> {
    return new Promise((resolve) => {
      const look = () => {
        const found = refreshes.find((r) => r.mints.includes(mint) && r.ledgerSeq >= seq);
        if (!found) return;
        onRefresh.delete(look);
        resolve(found);
      };
      onRefresh.add(look);
      look();
    });
  }

  const fund = (wallet: string, sol: number) => airdrop(connection(), wallet, sol);
  async function citizen(prefix: string, sol = 0): Promise<Citizen> {
    const made = await registerCitizen(base, prefix);
    if (sol > 0) await fund(made.wallet, sol);
    return made;
  }
  const post = (who: Citizen, path: string, body: Record<string, unknown>) => call(base, 'POST', path, { key: who.key, body });
  const page = (mint: string) => call(base, 'GET', `/api/v1/tokens/${mint}`);
  async function held(wallet: string, mint: string): Promise<bigint> {
    const address = getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(wallet), true, TOKEN_2022_PROGRAM_ID);
    return (await getAccount(connection(), address, 'confirmed', TOKEN_2022_PROGRAM_ID)).amount;
  }

  /** The page's chain figures are the curve the pump SDK decodes now. */
  async function expectCurve(body: any, mint: string): Promise<void> {
    const [curve, global] = await Promise.all([pump.fetchBondingCurve(new PublicKey(mint)), pump.fetchGlobal()]);
    const [vT, vQ] = [rawToUi(big(curve.virtualTokenReserves), 6), rawToUi(big(curve.virtualQuoteReserves), 9)];
    expect(body.reserves).toEqual({
      source: 'bonding_curve',
      virtual_token_reserves: vT,
      virtual_sol_reserves: vQ,
      real_token_reserves: rawToUi(big(curve.realTokenReserves), 6),
      real_sol_reserves: rawToUi(big(curve.realQuoteReserves), 9),
    });
    expect(body.price_sol).toBe(vQ / vT);
    expect(body.price_usd).toBeCloseTo((vQ / vT) * SOL_USD, 12);
    expect(body.market_cap_sol).toBeCloseTo((vQ / vT) * 1e9, 6);
    expect(body.market_cap_usd).toBeCloseTo((vQ / vT) * 1e9 * SOL_USD, 4);
    expect(body.progress).toBe(1 - Number(big(curve.realTokenReserves)) / Number(big(global.initialRealTokenReserves)));
  }

  let creator: Citizen;
  let mint: string;
  let deployed: any;

  it('a coin just deployed has its page at once: the deploy as the ledger recorded it, the curve as the chain holds it', async () => {
    creator = await citizen('dev', 3);
    const res = await post(creator, '/api/v1/tokens/deploy', {
      name: 'Page Coin',
      symbol: 'PAGE',
      description: 'a coin with a page',
      image: PNG,
      twitter: 'https://x.com/pagecoin',
      website: 'https://pagecoin.example',
      dev_buy_sol: 0.2,
    });
    expect(res.status).toBe(201);
    deployed = res.body;
    mint = deployed.mint;

    const got = await page(mint);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      ok: true,
      mint,
      name: 'Page Coin',
      symbol: 'PAGE',
      description: 'a coin with a page',
      image: deployed.image,
      metadata_uri: deployed.metadata_uri,
      launched_here: true,
      venue: 'pump',
      complete: false,
      status: 'bonding',
      supply: 1e9,
      decimals: 6,
      bonding_curve: bondingCurvePda(new PublicKey(mint)).toBase58(),
      creator: creator.wallet,
      pool: null,
      deployed_by: { agent_id: creator.id, handle: creator.handle },
      deployed_at: expect.any(Number),
      seq: deployed.ledger.seq,
      signature: deployed.signature,
      fee_share: { status: 'active', shares: deployed.fee_share.shares, signature: deployed.fee_share.signature },
      mayhem: false,
      holder_reward: false,
      dev_buy: { sol: 0.2, quoted_tokens: deployed.dev_buy.quoted_tokens },
      trades: { buys: 0, sells: 0, buy_volume_sol: 0, sell_volume_sol: 0, last_trade_at: null },
      links: {
        twitter: 'https://x.com/pagecoin',
        website: 'https://pagecoin.example',
        pump: `https://pump.fun/coin/${mint}`,
        explorer: expect.stringContaining(`/address/${mint}`),
        dexscreener: `https://dexscreener.com/solana/${mint}`,
      },
      society_posts: [],
      market_updated_at: expect.any(Number),
      market_slot: expect.any(Number),
    });
    expect(got.body.markets).toEqual(
      expect.arrayContaining([
        { name: 'pump.fun', url: `https://pump.fun/coin/${mint}`, venue: 'pump', active: true },
        { name: 'DEX Screener', url: `https://dexscreener.com/solana/${mint}` },
        { name: 'Jupiter', url: `https://jup.ag/swap/SOL-${mint}`, venue: 'jupiter', active: false },
      ]),
    );
    // The dev buy moved the curve.
    expect(got.body.progress).toBeGreaterThan(0);
    await expectCurve(got.body, mint);

    const signal = await post(creator, '/api/v1/posts', { body: 'PAGE is live', mint });
    expect(signal.status).toBe(201);
    await post(creator, '/api/v1/posts', { body: 'a reply is not a signal', parent_id: signal.body.post.id });
    const withPost = await page(mint);
    expect(withPost.body.society_posts.map((p: any) => p.id)).toEqual([signal.body.post.id]);

    const list = await call(base, 'GET', '/api/v1/tokens');
    expect(list.status).toBe(200);
    // Beside the service token, which @treasury deployed at first boot.
    expect(list.body.tokens.map((t: any) => t.deployed_by.handle)).toEqual([creator.handle, 'treasury']);
    const { society_posts: _posts, ...summary } = withPost.body;
    expect(list.body.tokens[0]).toEqual({ ...summary, ok: undefined, sol_usd: undefined, market_updated_at: expect.any(Number), market_slot: expect.any(Number) });
    expect(list.body).toMatchObject({ next_before: null, sol_usd: SOL_USD });
  });

  it('a trade shows on the next read, and the refresher catches up with it on its own', async () => {
    const trader = await citizen('trader', 3);
    const bought = await post(trader, '/api/v1/tokens/buy', { mint, amount_sol: 1 });
    expect(bought.status).toBe(200);

    const got = await page(mint);
    const landed = await connection().getTransaction(bought.body.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    // Read at or after the trade's slot, whoever read it: the page does not serve a figure older than the ledger.
    expect(got.body.market_slot).toBeGreaterThanOrEqual(landed!.slot);
    expect(got.body.trades).toMatchObject({ buys: 1, sells: 0, buy_volume_sol: 1, last_trade_at: expect.any(Number) });
    await expectCurve(got.body, mint);

    // The projector's announcement of the buy sends the refresher to the chain for this coin.
    const refresh = await refreshedPast(mint, bought.body.ledger.seq);
    expect(refresh.periodic).toBe(false);
    const again = await page(mint);
    expect(again.body.market_slot).toBeGreaterThanOrEqual(got.body.market_slot);
    await expectCurve(again.body, mint);

    const sold = await post(trader, '/api/v1/tokens/sell', { mint, percent: 50 });
    expect(sold.status).toBe(200);
    const after = await page(mint);
    expect(after.body.trades).toMatchObject({ buys: 1, sells: 1, sell_volume_sol: sold.body.quoted_sol });
    await expectCurve(after.body, mint);
  });

  it('lists coins newest first, a page at a time', async () => {
    const other = await citizen('other', 1);
    const second = await post(other, '/api/v1/tokens/deploy', { name: 'Second', symbol: 'TWO', image: PNG, fee_share: false });
    expect(second.status).toBe(201);
    const first = await call(base, 'GET', '/api/v1/tokens?limit=1');
    expect(first.body.tokens.map((t: any) => [t.mint, t.deployed_by.handle, t.fee_share.status, t.progress])).toEqual([[second.body.mint, other.handle, 'off', 0]]);
    expect(first.body.next_before).toBe(second.body.ledger.seq);
    const next = await call(base, 'GET', `/api/v1/tokens?limit=1&before=${first.body.next_before}`);
    expect(next.body.tokens.map((t: any) => t.mint)).toEqual([mint]);
    const service = await call(base, 'GET', `/api/v1/tokens?limit=1&before=${next.body.next_before}`);
    expect(service.body.tokens.map((t: any) => t.deployed_by.handle)).toEqual(['treasury']);
    const last = await call(base, 'GET', `/api/v1/tokens?limit=1&before=${service.body.next_before}`);
    expect(last.body).toMatchObject({ tokens: [], next_before: null });
    for (const bad of ['limit=0', 'limit=201', 'before=-1', 'limit=ten']) {
      expect((await call(base, 'GET', `/api/v1/tokens?${bad}`)).body.error).toMatchObject({ code: 'invalid_request' });
    }
  });

  it('a mint launched elsewhere: what the chain says, read once and then served from the cache; no mint at all is 404, a malformed one 400', async () => {
    const payer = Keypair.generate();
    await fund(payer.publicKey.toBase58(), 1);
    const elsewhere = await createMint(connection(), payer, payer.publicKey, null, 2, undefined, { commitment: 'confirmed' }, TOKEN_PROGRAM_ID);
    const got = await page(elsewhere.toBase58());
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      mint: elsewhere.toBase58(),
      launched_here: false,
      venue: 'jupiter',
      status: 'listed',
      name: null,
      symbol: null,
      price_sol: null,
      progress: null,
      supply: 0,
      decimals: 2,
      bonding_curve: null,
      reserves: null,
      pool: null,
      deployed_by: null,
      deployed_at: null,
      fee_share: null,
      society_posts: [],
    });
    expect(got.body.markets.map((m: any) => m.name)).toEqual(['DEX Screener', 'Jupiter']);
    const again = await page(elsewhere.toBase58());
    expect(again.body.market_updated_at).toBe(got.body.market_updated_at);

    const nowhere = await page(Keypair.generate().publicKey.toBase58());
    expect(nowhere.status).toBe(404);
    expect(nowhere.body.error.code).toBe('unknown_mint');
    // A wallet is an account on the chain, but no mint.
    expect((await page(creator.wallet)).body.error.code).toBe('unknown_mint');
    for (const bad of ['not-a-mint', '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl', '1111']) {
      const res = await page(bad);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_pubkey');
    }
  });

  it('a bought-out coin graduates: its page shows the PumpSwap pool', async () => {
    const whale = await citizen('whale', 200);
    const migrated = server.localnet!.keeper!.whenMigrated(new PublicKey(mint));
    const out = await post(whale, '/api/v1/tokens/buy', { mint, amount_sol: 120, slippage_bps: 5000 });
    expect(out.status).toBe(200);
    await migrated;
    // The migration is no action on the ledger: a client sees it within a refresher pass; a test asks for one.
    await server.workers.markets.refresh([mint]);

    const got = await page(mint);
    const pool = canonicalPumpPoolPda(new PublicKey(mint)).toBase58();
    expect(got.body).toMatchObject({ venue: 'pump-amm', complete: true, status: 'graduated', progress: 1, pool: { address: pool }, reserves: { source: 'pool' } });
    expect(got.body.reserves.base_reserve).toBe(got.body.pool.base_reserve);
    expect(got.body.price_sol).toBe((got.body.pool.quote_reserve + got.body.pool.virtual_quote_reserve) / got.body.pool.base_reserve);
    expect(got.body.markets).toEqual(expect.arrayContaining([{ name: 'PumpSwap', url: expect.stringContaining(mint), venue: 'pump-amm', active: true, pool }]));
    expect(got.body.markets.find((m: any) => m.name === 'pump.fun')).toMatchObject({ active: false });
  }, 60_000);

  it('ranks citizens by SOL plus their coins at the coins’ prices', async () => {
    // The board shows what the pricing worker last read; the test has it read the chain now, past every action so far.
    const head = await server.services.store.headRevision(LEDGER_STREAM);
    expect(await server.services.projection.waitFor(head, 10_000)).toBe(true);
    const refresh = await server.workers.portfolios.refresh();
    const board = await call(base, 'GET', '/api/v1/leaderboard');
    expect(board.status).toBe(200);
    const coin = (await page(mint)).body;
    const dev = board.body.leaders.find((l: any) => l.agent.id === creator.id);
    expect(dev).toMatchObject({ priced_at: refresh.priced_at, holdings: 1 });
    expect(dev.sol).toBe((await connection().getBalance(new PublicKey(creator.wallet), 'confirmed')) / 1e9);
    const tokens = Number(await held(creator.wallet, mint)) / 1e6;
    expect(tokens).toBeGreaterThan(0);
    expect(dev.tokens_sol).toBeCloseTo(tokens * coin.price_sol, 9);
    expect(dev.portfolio_sol).toBeCloseTo(dev.sol + dev.tokens_sol, 9);
    expect(dev.portfolio_usd).toBeCloseTo(dev.portfolio_sol * SOL_USD, 1);
    const values = board.body.leaders.map((l: any) => l.portfolio_sol);
    expect(values).toEqual([...values].sort((a: number, b: number) => b - a));
  });
});
