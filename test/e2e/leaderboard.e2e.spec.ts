import { randomBytes } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, getAccount, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { OnlinePumpSdk } from '@pump-fun/pump-sdk';
import type { PortfolioRefresh } from '@svc/app-workers';
import { rawToUi } from '@svc/chain';
import { LEDGER_STREAM } from '@svc/ledger';
import { LEADERBOARD_TTL_MS, LeaderboardCache } from '../../apps/api/src/society/leaderboard';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call } from '../support/http';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const SOL_USD = 150;
const HOUR = 3_600_000;
const big = (n: { toString(): string }) => BigInt(n.toString());

/**
 * GET /api/v1/leaderboard on the whole service and the bundled chain: citizens ranked by what the pricing worker
 * read from the chain, the figures checked with web3.js and the pump SDK, and a price move on a bonding curve
 * reordering the board within one cache period. The worker's period and the board's clock are the test's: it
 * waits on the projector's checkpoint and on the refresh it asks for, never on a sleep.
 */
describe('the leaderboard follows the chain', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;
  /** The board's clock: the cache period passes when the test says so. */
  let clock = Date.now();
  const refreshes: PortfolioRefresh[] = [];

  beforeAll(async () => {
    db = await freshDatabase('leaderboard_e2e');
    server = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('leaderboard-e2e'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
      { outboxRecoveryEveryMs: HOUR, portfolios: { everyMs: HOUR, pollMs: HOUR, onRefreshed: (r) => refreshes.push(r) } },
    );
    base = server.url;
    server.services.leaderboard = new LeaderboardCache(server.services.database.db, server.services.config.readModelSchema, { now: () => clock });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const connection = () => server.services.chain.connection;
  async function citizen(prefix: string, sol: number): Promise<TestCitizen> {
    const made = await registerCitizen(base, prefix);
    await airdrop(connection(), made.wallet, sol);
    return made;
  }
  async function deploy(who: TestCitizen, symbol: string, devBuySol: number): Promise<string> {
    const res = await call(base, 'POST', '/api/v1/tokens/deploy', { key: who.key, body: { name: `Board ${symbol}`, symbol, image: PNG, dev_buy_sol: devBuySol } });
    expect(res.status).toBe(201);
    return res.body.mint;
  }
  /** The ledger head, once the read models include it. */
  async function projected(): Promise<number> {
    const head = await server.services.store.headRevision(LEDGER_STREAM);
    expect(await server.services.projection.waitFor(head, 10_000)).toBe(true);
    return head;
  }
  /** A refresh that includes every action recorded so far. */
  async function refreshed(): Promise<PortfolioRefresh> {
    const head = await projected();
    const refresh = await server.workers.portfolios.refresh();
    expect(refresh.ledger_seq).toBeGreaterThanOrEqual(head);
    return refresh;
  }
  const board = async () => {
    const res = await call(base, 'GET', '/api/v1/leaderboard');
    expect(res.status).toBe(200);
    return res.body;
  };
  const rankOf = (body: any, who: TestCitizen) => body.leaders.findIndex((l: any) => l.agent.id === who.id);
  const rowOf = (body: any, who: TestCitizen) => body.leaders.find((l: any) => l.agent.id === who.id);

  /** What the row of `who` must say, read now with web3.js and the pump SDK: SOL plus the coin at its curve's price. */
  async function onChain(who: TestCitizen, mint: string): Promise<{ sol: number; tokensSol: number }> {
    const owner = new PublicKey(who.wallet);
    const account = await getAccount(connection(), getAssociatedTokenAddressSync(new PublicKey(mint), owner, true, TOKEN_2022_PROGRAM_ID), 'confirmed', TOKEN_2022_PROGRAM_ID);
    const curve = await new OnlinePumpSdk(connection()).fetchBondingCurve(new PublicKey(mint));
    const price = rawToUi(big(curve.virtualQuoteReserves), 9) / rawToUi(big(curve.virtualTokenReserves), 6);
    return { sol: (await connection().getBalance(owner, 'confirmed')) / 1e9, tokensSol: rawToUi(account.amount, 6) * price };
  }

  it('The leaderboard order follows a price change on the bundled chain within one cache period', async () => {
    // Two citizens holding different coins; `second` starts a SOL richer.
    const [first, second, whale] = await Promise.all([citizen('lbfirst', 3), citizen('lbsecond', 4), citizen('lbwhale', 45)]);
    const [firstCoin, secondCoin] = await Promise.all([deploy(first, 'FRST', 1), deploy(second, 'SCND', 1)]);

    const before = await refreshed();
    clock += LEADERBOARD_TTL_MS;
    const ranked = await board();
    expect(ranked.computed_at).toBe(clock);
    expect(ranked.priced_at).toBe(before.priced_at);
    expect(ranked.sol_usd).toBe(SOL_USD);
    expect(rankOf(ranked, second)).toBeLessThan(rankOf(ranked, first));
    for (const [who, mint] of [[first, firstCoin], [second, secondCoin]] as const) {
      const row = rowOf(ranked, who);
      const chain = await onChain(who, mint);
      expect(row).toMatchObject({ sol: chain.sol, holdings: 1, priced_at: before.priced_at });
      expect(row.tokens_sol).toBeCloseTo(chain.tokensSol, 9);
      expect(row.portfolio_sol).toBeCloseTo(chain.sol + chain.tokensSol, 9);
      expect(row.portfolio_usd).toBeCloseTo(row.portfolio_sol * SOL_USD, 1);
    }

    // The whale buys `first`'s coin on its curve: its price, and `first`'s portfolio, rise.
    const buy = await call(base, 'POST', '/api/v1/tokens/buy', { key: whale.key, body: { mint: firstCoin, amount_sol: 40, slippage_bps: 5000 } });
    expect(buy.status).toBe(200);
    expect(buy.body.venue).toBe('pump');
    const after = await refreshed();
    expect(after.priced_at).toBeGreaterThan(before.priced_at);

    // Within the cache period the board is the one computed before the trade.
    clock += LEADERBOARD_TTL_MS - 1;
    const cached = await board();
    expect(cached.computed_at).toBe(ranked.computed_at);
    expect(rankOf(cached, second)).toBeLessThan(rankOf(cached, first));

    // Once it has passed, the order follows the new price.
    clock += 1;
    const flipped = await board();
    expect(flipped.computed_at).toBe(clock);
    expect(rankOf(flipped, first)).toBeLessThan(rankOf(flipped, second));
    const row = rowOf(flipped, first);
    const chain = await onChain(first, firstCoin);
    expect(row).toMatchObject({ sol: chain.sol, priced_at: after.priced_at });
    expect(row.tokens_sol).toBeCloseTo(chain.tokensSol, 9);
    expect(row.tokens_sol).toBeGreaterThan(rowOf(ranked, first).tokens_sol * 2);
    const values = flipped.leaders.map((l: any) => l.portfolio_sol);
    expect(values).toEqual([...values].sort((x: number, y: number) => y - x));
  }, 120_000);

  it('a citizen registered since the last refresh ranks after every priced one, with null figures, until the next refresh prices it', async () => {
    const newcomer = await citizen('lbnew', 1000);
    await projected();
    clock += LEADERBOARD_TTL_MS;
    const unpriced = await board();
    expect(unpriced.leaders.at(-1)).toMatchObject({ agent: { id: newcomer.id }, sol: null, tokens_sol: null, portfolio_sol: null, portfolio_usd: null, priced_at: null });

    await refreshed();
    clock += LEADERBOARD_TTL_MS;
    const priced = await board();
    expect(priced.leaders[0]).toMatchObject({ rank: 1, agent: { id: newcomer.id }, sol: 1000, tokens_sol: 0, holdings: 0 });
    expect(refreshes.length).toBeGreaterThanOrEqual(3);
  }, 60_000);
});
