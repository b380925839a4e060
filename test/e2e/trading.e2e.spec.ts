import { randomBytes } from 'node:crypto';
import BN from 'bn.js';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, VersionedTransaction, type Connection } from '@solana/web3.js';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID, getAccount, getAssociatedTokenAddressSync, getMint } from '@solana/spl-token';
import { OnlinePumpSdk, PUMP_SDK, canonicalPumpPoolPda, feeSharingConfigPda, getBuyTokenAmountFromSolAmount, getSellSolAmountFromTokenAmount } from '@pump-fun/pump-sdk';
import { OnlinePumpAmmSdk, buyQuoteInput, sellBaseInput } from '@pump-fun/pump-swap-sdk';
import { swapPricing } from '../support/pumpAmm';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { call } from '../support/http';
import { ledgerEntries } from '../support/ledger';
import { checkedFetch } from '../support/openapi';

type Citizen = TestCitizen;

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const ONE_BILLION_SUPPLY = new BN('1000000000000000');

/**
 * The whole life of a coin through the HTTP API on the bundled chain, every balance checked with web3.js and
 * every quote with the pump SDK's own math: deployed with a dev buy and fee sharing, quoted and bought on its
 * curve, sold, burned, bought out until the keeper graduates it, traded on its PumpSwap pool, and sold off.
 */
describe('trading: deploy, quote, buy, sell, burn and swap over HTTP', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;
  let pump: OnlinePumpSdk;

  beforeAll(async () => {
    db = await freshDatabase('trading');
    server = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('trading'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
      { outboxRecoveryEveryMs: 3_600_000 },
    );
    base = server.url;
    pump = new OnlinePumpSdk(connection());
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const connection = (): Connection => server.services.chain.connection;

  async function citizen(prefix: string, sol = 0, extra: Record<string, unknown> = {}, own?: Keypair): Promise<Citizen> {
    const made = await registerCitizen(base, prefix, extra, own);
    if (sol > 0) await fund(made.wallet, sol);
    return made;
  }
  const fund = (wallet: string, sol: number) => airdrop(connection(), wallet, sol);

  const post = (who: Citizen, path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => call(base, 'POST', path, { key: who.key, body, headers });
  const lamports = async (wallet: string) => BigInt(await connection().getBalance(new PublicKey(wallet), 'confirmed'));
  async function tokens(wallet: string, mint: string): Promise<bigint> {
    const address = getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(wallet), true, TOKEN_2022_PROGRAM_ID);
    const info = await connection().getAccountInfo(address, 'confirmed');
    return info ? (await getAccount(connection(), address, 'confirmed', TOKEN_2022_PROGRAM_ID)).amount : 0n;
  }
  const ledger = () => ledgerEntries(base);
  const actionOf = async (signature: string) => (await ledger()).filter((e) => e.type === 'ActionRecorded' && e.data.signature === signature);
  /** The SDK's own quote for a buy of `lamports` on the curve as the chain holds it now. */
  async function sdkCurveBuy(mint: string, spend: bigint): Promise<bigint> {
    const [global, feeConfig, bondingCurve] = await Promise.all([pump.fetchGlobal(), pump.fetchFeeConfig(), pump.fetchBondingCurve(new PublicKey(mint))]);
    return BigInt(getBuyTokenAmountFromSolAmount({ global, feeConfig, mintSupply: ONE_BILLION_SUPPLY, bondingCurve, amount: new BN(spend.toString()), quoteMint: NATIVE_MINT }).toString());
  }
  async function sdkCurveSell(mint: string, raw: bigint): Promise<bigint> {
    const [global, feeConfig, bondingCurve] = await Promise.all([pump.fetchGlobal(), pump.fetchFeeConfig(), pump.fetchBondingCurve(new PublicKey(mint))]);
    return BigInt(getSellSolAmountFromTokenAmount({ global, feeConfig, mintSupply: ONE_BILLION_SUPPLY, bondingCurve, amount: new BN(raw.toString()) }).toString());
  }

  let creator: Citizen;
  let mint: string;

  it('deploys a coin with a 32-character name, a dev buy and fee sharing (a second transaction)', async () => {
    creator = await citizen('dev', 3);
    const before = await lamports(creator.wallet);
    const res = await post(creator, '/api/v1/tokens/deploy', {
      name: 'A coin whose name is exactly 32!',
      symbol: 'TENCHARSYM',
      description: 'the longest name and symbol the spec allows',
      image: PNG,
      twitter: 'https://x.com/example',
      dev_buy_sol: 0.5,
      slippage_bps: 500,
    });
    expect(res.status).toBe(201);
    mint = res.body.mint;
    const treasury = (await server.services.serviceWallets.wallet('treasury')).publicKey;
    expect(res.body).toMatchObject({
      ok: true,
      executed: true,
      mint: expect.any(String),
      bonding_curve: expect.any(String),
      creator: creator.wallet,
      metadata_uri: expect.stringContaining('/api/v1/media/'),
      dev_buy: { sol: 0.5, quoted_tokens: expect.any(Number) },
      signature: expect.any(String),
      explorer: expect.stringContaining('cluster=custom'),
      fee_share: {
        status: 'active',
        shares: [
          { address: creator.wallet, share_bps: 9000 },
          { address: treasury, share_bps: 1000 },
        ],
        signature: expect.any(String),
      },
    });
    // The dev buy landed in the create transaction: the citizen holds the quoted tokens (the SDK's math), to the token.
    const held = await tokens(creator.wallet, mint);
    expect(Math.abs(Number(held) / 1e6 - res.body.dev_buy.quoted_tokens)).toBeLessThan(1);
    const created = await connection().getTransaction(res.body.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(created?.meta?.err).toBeNull();
    const onChainMint = await getMint(connection(), new PublicKey(mint), 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(onChainMint.supply).toBe(1_000_000_000_000_000n);
    const sharing = PUMP_SDK.decodeSharingConfig((await connection().getAccountInfo(feeSharingConfigPda(new PublicKey(mint)), 'confirmed'))!);
    expect(sharing.shareholders.map((s) => [s.address.toBase58(), s.shareBps])).toEqual([
      [creator.wallet, 9000],
      [treasury, 1000],
    ]);
    expect(before - (await lamports(creator.wallet))).toBeLessThan(BigInt(0.55 * LAMPORTS_PER_SOL));
    // The hosted metadata names the hosted image, and both are served immutable.
    const metadata = await checkedFetch(res.body.metadata_uri);
    expect(metadata.headers.get('cache-control')).toContain('immutable');
    const json = await metadata.json();
    expect(json).toMatchObject({ name: 'A coin whose name is exactly 32!', symbol: 'TENCHARSYM', twitter: 'https://x.com/example', image: expect.stringContaining('/api/v1/media/') });
    expect((await actionOf(res.body.signature))[0]).toMatchObject({ actor: creator.id, data: { action: 'deploy', details: { mint } } });
    expect((await actionOf(res.body.fee_share.signature))[0]).toMatchObject({ actor: creator.id, data: { action: 'fee_share', details: { mint, status: 'active' } } });
    // The coin shows on its deployer's profile and record, in search and on the board.
    const profile = await call(base, 'GET', `/api/v1/agents/${creator.handle}`);
    expect(profile.body.tokens).toEqual([expect.objectContaining({ mint, symbol: 'TENCHARSYM', fee_share: expect.objectContaining({ status: 'active' }) })]);
    const record = await call(base, 'GET', `/api/v1/record/${creator.handle}`);
    expect(record.body.tokens).toEqual([expect.objectContaining({ mint })]);
    expect(record.body.actions.map((a: { signature: string }) => a.signature)).toEqual(expect.arrayContaining([res.body.signature, res.body.fee_share.signature]));
    const found = await call(base, 'GET', '/api/v1/search?q=tencharsym');
    expect(found.body.tokens).toEqual([expect.objectContaining({ mint })]);
    expect((await call(base, 'GET', '/api/v1/pulse')).body.tokens).toBeGreaterThanOrEqual(1);
  });

  it('quotes a curve buy with the SDK’s math and the buy delivers it', async () => {
    const trader = await citizen('trader', 5);
    const spend = BigInt(LAMPORTS_PER_SOL);
    const quote = await call(base, 'GET', `/api/v1/quote?mint=${mint}&side=buy&amount=1`);
    expect(quote.status).toBe(200);
    const expected = await sdkCurveBuy(mint, spend);
    expect(quote.body).toMatchObject({ ok: true, venue: 'pump', side: 'buy', in_amount: 1, expected_out: Number(expected) / 1e6, slippage_bps: 500 });
    expect(quote.body.min_out).toBeCloseTo((Number(expected) * 0.95) / 1e6, 5);
    const res = await post(trader, '/api/v1/tokens/buy', { mint, amount_sol: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, venue: 'pump', route: expect.stringContaining('buy_exact_sol_in'), spent_sol: 1, quoted_tokens: quote.body.expected_out, executed: true, signature: expect.any(String) });
    expect(res.body.explorer).toContain(res.body.signature);
    const received = await tokens(trader.wallet, mint);
    // buy_exact_sol_in keeps back a lamport of the net SOL (its IDL documents it), so it delivers the SDK's
    // quote less at most that lamport's worth: the two agree to the token, never in the buyer's disfavour by more.
    expect(expected - received).toBeGreaterThanOrEqual(0n);
    expect(expected - received).toBeLessThan(1_000_000n);
    expect((await actionOf(res.body.signature))[0]).toMatchObject({ actor: trader.id, data: { action: 'buy', details: { mint, venue: 'pump' } } });

    // The wallet values the new holding at the price source's live price.
    const wallet = await call(base, 'GET', '/api/v1/wallet', { key: trader.key });
    const holding = wallet.body.holdings.find((h: { mint: string }) => h.mint === mint);
    expect(holding).toMatchObject({ ui_amount: Number(received) / 1e6, price_usd: expect.any(Number) });
    expect(holding.value_usd).toBeGreaterThan(0);
    expect(wallet.body.portfolio_usd).toBeCloseTo(wallet.body.sol_usd + holding.value_usd, 6);

    // A retried buy under one Idempotency-Key buys once and answers the same.
    const once = { mint, amount_sol: 0.01 };
    const first = await post(trader, '/api/v1/tokens/buy', once, { 'idempotency-key': 'buy-once' });
    const again = await post(trader, '/api/v1/tokens/buy', once, { 'idempotency-key': 'buy-once' });
    expect(again.body).toEqual(first.body);
    expect((await ledger()).filter((e) => e.type === 'ActionRecorded' && e.actor === trader.id && e.data.action === 'buy')).toHaveLength(2);
    const bought = await tokens(trader.wallet, mint);

    const half = bought / 2n;
    const sellQuote = await call(base, 'GET', `/api/v1/quote?mint=${mint}&side=sell&amount=${Number(half) / 1e6}`);
    expect(sellQuote.body).toMatchObject({ venue: 'pump', side: 'sell', expected_out: Number(await sdkCurveSell(mint, half)) / 1e9 });
    const before = await lamports(trader.wallet);
    const sold = await post(trader, '/api/v1/tokens/sell', { mint, amount: Number(half) / 1e6 });
    expect(sold.status).toBe(200);
    expect(sold.body).toMatchObject({ venue: 'pump', sold_tokens: Number(half) / 1e6, quoted_sol: sellQuote.body.expected_out, executed: true });
    const tx = await connection().getTransaction(sold.body.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect((await lamports(trader.wallet)) - before + BigInt(tx!.meta!.fee)).toBe(BigInt(Math.round(sellQuote.body.expected_out * 1e9)));
    expect(await tokens(trader.wallet, mint)).toBe(bought - half);

    const all = await post(trader, '/api/v1/tokens/sell', { mint, percent: 100 });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ closed_token_account: true, executed: true });
    expect(await connection().getAccountInfo(getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(trader.wallet), true, TOKEN_2022_PROGRAM_ID), 'confirmed')).toBeNull();
    const none = await post(trader, '/api/v1/tokens/sell', { mint, percent: 100 });
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe('no_balance');
  });

  it('burns a share of a holding and reports the supply', async () => {
    const held = await tokens(creator.wallet, mint);
    const res = await post(creator, '/api/v1/tokens/burn', { mint, percent: 10 });
    expect(res.status).toBe(200);
    const burned = (held * 1000n) / 10_000n;
    expect(res.body).toMatchObject({ ok: true, burned_tokens: Number(burned) / 1e6, supply_before: 1e9, supply_after_estimate: (1e15 - Number(burned)) / 1e6, executed: true });
    expect(await tokens(creator.wallet, mint)).toBe(held - burned);
    expect((await getMint(connection(), new PublicKey(mint), 'confirmed', TOKEN_2022_PROGRAM_ID)).supply).toBe(1_000_000_000_000_000n - burned);
  });

  it('refuses bad trades in the envelope, sending nothing', async () => {
    const poor = await citizen('poor', 0.01);
    const stranger = Keypair.generate().publicKey.toBase58();
    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      ['/api/v1/tokens/buy', { mint: 'O0Il', amount_sol: 1 }, 400, 'invalid_pubkey'],
      ['/api/v1/tokens/buy', { mint: stranger, amount_sol: 1 }, 404, 'unknown_mint'],
      ['/api/v1/tokens/buy', { mint, amount_sol: 5 }, 400, 'insufficient'],
      ['/api/v1/tokens/buy', { mint, amount_sol: 0.001, slippage_bps: 20000 }, 400, 'invalid_request'],
      ['/api/v1/tokens/sell', { mint }, 400, 'amount_required'],
      ['/api/v1/tokens/sell', { mint, percent: 10, amount: 5 }, 400, 'invalid_request'],
      ['/api/v1/tokens/sell', { mint, percent: 150 }, 400, 'invalid_request'],
      ['/api/v1/tokens/sell', { mint, percent: 0.001 }, 400, 'invalid_request'],
      ['/api/v1/tokens/sell', { mint, percent: 50 }, 400, 'no_balance'],
      ['/api/v1/tokens/burn', { mint }, 400, 'amount_required'],
      ['/api/v1/tokens/burn', { mint, amount: 1 }, 400, 'no_balance'],
      ['/api/v1/tokens/burn', { mint: stranger, amount: 1 }, 404, 'unknown_mint'],
      ['/api/v1/tokens/deploy', { name: 'x', symbol: 'X', image: PNG }, 400, 'insufficient'],
      ['/api/v1/tokens/deploy', { name: 'x', symbol: 'X', image: PNG, holder_reward: true, fee_share: true }, 400, 'invalid_request'],
      ['/api/v1/tokens/deploy', { name: 'x'.repeat(33), symbol: 'X', image: PNG }, 400, 'invalid_request'],
      ['/api/v1/tokens/deploy', { name: 'x', symbol: 'X', image: 'data:image/png;base64,R0lGODlhAQABAAAAACw=' }, 400, 'insufficient'],
      ['/api/v1/swap', { input_mint: NATIVE_MINT.toBase58(), output_mint: 'nope', amount: 1 }, 400, 'invalid_pubkey'],
    ];
    for (const [path, body, status, code] of cases) {
      const res = await post(poor, path, body);
      expect({ path, body, status: res.status, code: res.body.error?.code }).toEqual({ path, body, status, code });
    }
    const badQuote = await call(base, 'GET', `/api/v1/quote?mint=${stranger}&side=buy&amount=1`);
    expect([badQuote.status, badQuote.body.error.code]).toEqual([404, 'unknown_mint']);
    for (const query of ['side=hold&amount=1', 'side=buy&amount=1e20', 'side=sell&amount=1e30', 'side=buy&amount=0']) {
      const bad = await call(base, 'GET', `/api/v1/quote?mint=${mint}&${query}`);
      expect({ query, status: bad.status, code: bad.body.error?.code }).toEqual({ query, status: 400, code: 'invalid_request' });
    }
    expect(await connection().getSignaturesForAddress(new PublicKey(poor.wallet), {}, 'confirmed')).toHaveLength(1);
  });

  it('refuses deploy images that are oversized, of the wrong type, or pointed at private addresses', async () => {
    const dev = await citizen('img', 1);
    const pngHeader = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const oversized = `data:image/png;base64,${Buffer.concat([pngHeader, Buffer.alloc(4 * 1024 * 1024)]).toString('base64')}`;
    const images = [
      oversized,
      'data:image/png;base64,R0lGODlhAQABAAAAACw=',
      `data:image/png;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64')}`,
      'data:image/png;base64,@@@',
      'http://example.com/a.png',
      'https://127.0.0.1/a.png',
      'https://localhost/a.png',
      'https://10.1.2.3/a.png',
      'https://169.254.169.254/latest/meta-data',
      'ftp://example.com/a.png',
    ];
    for (const image of images) {
      const res = await post(dev, '/api/v1/tokens/deploy', { name: 'Img', symbol: 'IMG', image });
      expect({ image: image.slice(0, 60), status: res.status, code: res.body.error?.code }).toEqual({ image: image.slice(0, 60), status: 400, code: 'invalid_request' });
      expect(res.body.error.message).toMatch(/image/);
    }
    expect(await connection().getSignaturesForAddress(new PublicKey(dev.wallet), {}, 'confirmed')).toHaveLength(1);
  });

  it('buys the curve out; the keeper graduates it and the next trades route to its PumpSwap pool', async () => {
    const whale = await citizen('whale', 200);
    const migrated = server.localnet!.keeper!.whenMigrated(new PublicKey(mint));
    const out = await post(whale, '/api/v1/tokens/buy', { mint, amount_sol: 120, slippage_bps: 5000 });
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ venue: 'pump', executed: true });
    expect((await pump.fetchBondingCurve(new PublicKey(mint))).complete).toBe(true);
    await migrated;

    const quote = await call(base, 'GET', `/api/v1/quote?mint=${mint}&side=buy&amount=0.5`);
    expect(quote.body).toMatchObject({ venue: 'pump-amm', route: expect.stringContaining('PumpSwap') });
    const amm = new OnlinePumpAmmSdk(connection());
    const pool = canonicalPumpPoolPda(new PublicKey(mint));
    const poolState = await amm.swapSolanaState(pool, Keypair.generate().publicKey);
    expect(quote.body.expected_out).toBe(Number(buyQuoteInput({ ...swapPricing(poolState), quote: new BN(LAMPORTS_PER_SOL / 2) }).base.toString()) / 1e6);
    const trader = await citizen('pooler', 3);
    const bought = await post(trader, '/api/v1/tokens/buy', { mint, amount_sol: 0.5 });
    expect(bought.status).toBe(200);
    expect(bought.body).toMatchObject({ venue: 'pump-amm', executed: true, quoted_tokens: quote.body.expected_out });
    const received = await tokens(trader.wallet, mint);
    expect(Math.abs(Number(received) / 1e6 - quote.body.expected_out)).toBeLessThan(1);

    const sellQuote = await call(base, 'GET', `/api/v1/quote?mint=${mint}&side=sell&amount=${Number(received) / 1e6}`);
    expect(sellQuote.body).toMatchObject({ venue: 'pump-amm', side: 'sell' });
    const afterBuy = await amm.swapSolanaState(pool, Keypair.generate().publicKey);
    expect(sellQuote.body.expected_out).toBe(Number(sellBaseInput({ ...swapPricing(afterBuy), base: new BN(received.toString()) }).uiQuote.toString()) / 1e9);
    const before = await lamports(trader.wallet);
    const sold = await post(trader, '/api/v1/tokens/sell', { mint, percent: 100 });
    expect(sold.status).toBe(200);
    expect(sold.body).toMatchObject({ venue: 'pump-amm', closed_token_account: true, quoted_sol: sellQuote.body.expected_out });
    const tx = await connection().getTransaction(sold.body.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    // The SOL that came back: the quote, plus the closed token account's rent, less the network fee.
    const gained = (await lamports(trader.wallet)) - before + BigInt(tx!.meta!.fee);
    expect(gained).toBeGreaterThanOrEqual(BigInt(Math.round(sellQuote.body.expected_out * 1e9)));
    expect(await tokens(trader.wallet, mint)).toBe(0n);
  });

  it('swaps coin to coin through the aggregator, two hops through SOL', async () => {
    const dev = await citizen('swapdev', 3);
    const other = await post(dev, '/api/v1/tokens/deploy', { name: 'Other', symbol: 'OTH', image: PNG, fee_share: false });
    expect(other.status).toBe(201);
    const holding = await tokens(creator.wallet, mint);
    expect(holding).toBeGreaterThan(0n);
    const amount = Number(holding / 4n) / 1e6;
    const res = await post(creator, '/api/v1/swap', { input_mint: mint, output_mint: other.body.mint, amount, slippage_bps: 300 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ venue: 'jupiter', executed: true, input_mint: mint, output_mint: other.body.mint, in_amount: amount });
    expect(await tokens(creator.wallet, mint)).toBe(holding - holding / 4n);
    const got = await tokens(creator.wallet, other.body.mint);
    expect(Math.abs(Number(got) / 1e6 - res.body.quoted_out)).toBeLessThan(1);
    expect(Number(got) / 1e6).toBeGreaterThanOrEqual(res.body.min_out);
    const solIn = await post(creator, '/api/v1/swap', { input_mint: NATIVE_MINT.toBase58(), output_mint: other.body.mint, amount: 0.05 });
    expect(solIn.body).toMatchObject({ executed: true, in_amount: 0.05 });
    // Every trade is on the public activity log with its signature.
    const activity = JSON.stringify((await call(base, 'GET', '/api/v1/activity')).body);
    for (const signature of [res.body.signature, solIn.body.signature]) expect(activity).toContain(signature);
  });

  it('lists one coin\'s actions with /activity?mint=, and nothing of another coin', async () => {
    const dev = await citizen('actmint', 3);
    const coin = await post(dev, '/api/v1/tokens/deploy', { name: 'Listed', symbol: 'LST', image: PNG, fee_share: false, dev_buy_sol: 0.05 });
    const elsewhere = await post(dev, '/api/v1/tokens/deploy', { name: 'Elsewhere', symbol: 'ELS', image: PNG, fee_share: false });
    expect([coin.status, elsewhere.status]).toEqual([201, 201]);
    const bought = await post(dev, '/api/v1/tokens/buy', { mint: coin.body.mint, amount_sol: 0.05 });
    expect((await post(dev, '/api/v1/tokens/buy', { mint: elsewhere.body.mint, amount_sol: 0.05 })).status).toBe(200);
    // A swap names the coin as its output_mint.
    const swapped = await post(dev, '/api/v1/swap', { input_mint: NATIVE_MINT.toBase58(), output_mint: coin.body.mint, amount: 0.02 });
    expect(swapped.status).toBe(200);
    // And one back into SOL names it as its input_mint.
    const swappedBack = await post(dev, '/api/v1/swap', { input_mint: coin.body.mint, output_mint: NATIVE_MINT.toBase58(), amount: Math.floor(swapped.body.quoted_out / 2) });
    expect(swappedBack.status).toBe(200);

    const listed = await call(base, 'GET', `/api/v1/activity?mint=${coin.body.mint}`);
    expect(listed.status).toBe(200);
    expect(listed.body.actions.map((a: { action: string; signature: string }) => [a.action, a.signature])).toEqual([
      ['swap', swappedBack.body.signature],
      ['swap', swapped.body.signature],
      ['buy', bought.body.signature],
      ['deploy', coin.body.signature],
    ]);
    // Wrapped SOL is no coin's trade: the swaps above are not listed under it.
    const sol = await call(base, 'GET', `/api/v1/activity?mint=${NATIVE_MINT.toBase58()}`);
    expect(sol.body.actions.map((a: { signature: string }) => a.signature)).not.toContain(swapped.body.signature);
    const refused = await call(base, 'GET', '/api/v1/activity?mint=not-a-mint');
    expect([refused.status, refused.body.error.code, refused.body.error.field]).toEqual([400, 'invalid_pubkey', 'mint']);
  });

  it('deploys with each option: mayhem, holder_reward (no sharing), fee_share false, metadata_uri, and a retry under one Idempotency-Key', async () => {
    const dev = await citizen('opts', 3);
    const mayhem = await post(dev, '/api/v1/tokens/deploy', { name: 'Mayhem', symbol: 'MAY', image: PNG, mayhem: true, fee_share: false });
    expect(mayhem.status).toBe(201);
    expect(mayhem.body.fee_share).toEqual({ status: 'off', shares: [], signature: null });
    expect((await pump.fetchBondingCurve(new PublicKey(mayhem.body.mint))).isMayhemMode).toBe(true);
    expect(await connection().getAccountInfo(feeSharingConfigPda(new PublicKey(mayhem.body.mint)), 'confirmed')).toBeNull();

    const holders = await post(dev, '/api/v1/tokens/deploy', { name: 'Holders', symbol: 'HLD', image: PNG, holder_reward: true, metadata_uri: 'https://example.com/holders.json' });
    expect(holders.status).toBe(201);
    expect(holders.body).toMatchObject({ metadata_uri: 'https://example.com/holders.json', fee_share: { status: 'off' } });
    const curve = await pump.fetchBondingCurve(new PublicKey(holders.body.mint));
    expect(curve.isHolderReward).toBe(true);
    expect(curve.creator.toBase58()).toBe(holders.body.creator);
    expect(holders.body.creator).not.toBe(dev.wallet);

    // The longest metadata_uri the schema takes, with a dev buy: over 1,232 bytes without the lookup table.
    const longest = await post(dev, '/api/v1/tokens/deploy', {
      name: 'N'.repeat(32),
      symbol: 'S'.repeat(10),
      image: PNG,
      metadata_uri: `https://example.com/${'m'.repeat(180)}`,
      dev_buy_sol: 0.01,
      fee_share: false,
    });
    expect([longest.status, longest.body.executed]).toEqual([201, true]);
    const landed = await connection().getTransaction(longest.body.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(landed!.transaction.message.addressTableLookups.length).toBe(1);

    const body = { name: 'Retried', symbol: 'RTY', image: PNG, dev_buy_sol: 0.1 };
    const first = await post(dev, '/api/v1/tokens/deploy', body, { 'idempotency-key': 'deploy-once' });
    const again = await post(dev, '/api/v1/tokens/deploy', body, { 'idempotency-key': 'deploy-once' });
    expect(first.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const deploys = (await ledger()).filter((e) => e.type === 'ActionRecorded' && e.data.action === 'deploy' && (e.data.details as { mint: string }).mint === first.body.mint);
    expect(deploys).toHaveLength(1);
  });

  it('hands a deploy out signed by the mint only: the citizen signs the create, then the sharing', async () => {
    const own = Keypair.generate();
    const self = await citizen('selfdev', 0, { custody: 'self', public_key: own.publicKey.toBase58() }, own);
    await fund(self.wallet, 2);
    const res = await post(self, '/api/v1/tokens/deploy', { name: 'Self made', symbol: 'SELF', image: PNG, dev_buy_sol: 0.05 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ executed: false, transaction: expect.any(String), fee_share: { status: 'pending', transaction: expect.any(String) } });
    const create = VersionedTransaction.deserialize(Buffer.from(res.body.transaction, 'base64'));
    const signers = create.message.staticAccountKeys.slice(0, create.message.header.numRequiredSignatures).map((k) => k.toBase58());
    expect(signers).toEqual([self.wallet, res.body.mint]);
    // The mint has signed already; the citizen's slot is empty.
    expect(create.signatures[0]!.every((b) => b === 0)).toBe(true);
    expect(create.signatures[1]!.some((b) => b !== 0)).toBe(true);
    create.sign([own]);
    const created = await post(self, '/api/v1/tx/submit', { transaction: Buffer.from(create.serialize()).toString('base64') });
    expect(created.body).toMatchObject({ executed: true, action: 'deploy' });
    const share = VersionedTransaction.deserialize(Buffer.from(res.body.fee_share.transaction, 'base64'));
    share.sign([own]);
    const shared = await post(self, '/api/v1/tx/submit', { transaction: Buffer.from(share.serialize()).toString('base64') });
    expect(shared.body).toMatchObject({ executed: true, action: 'fee_share' });
    expect(await tokens(self.wallet, res.body.mint)).toBeGreaterThan(0n);
    expect(await connection().getAccountInfo(feeSharingConfigPda(new PublicKey(res.body.mint)), 'confirmed')).not.toBeNull();
  });

  it('hands a self-custody buy out unsigned; signed and submitted, it is recorded as the buy', async () => {
    const own = Keypair.generate();
    const self = await citizen('self', 0, { custody: 'self', public_key: own.publicKey.toBase58() }, own);
    await fund(self.wallet, 2);
    const res = await post(self, '/api/v1/tokens/buy', { mint, amount_sol: 0.2 });
    expect(res.status).toBe(200);
    // The coin graduated in an earlier test: the handout is a pool buy.
    expect(res.body).toMatchObject({ executed: false, venue: 'pump-amm', transaction: expect.any(String), fee_payer: self.wallet });
    const tx = VersionedTransaction.deserialize(Buffer.from(res.body.transaction, 'base64'));
    tx.sign([own]);
    const submitted = await post(self, '/api/v1/tx/submit', { transaction: Buffer.from(tx.serialize()).toString('base64') });
    expect(submitted.status).toBe(200);
    expect(submitted.body).toMatchObject({ executed: true, action: 'buy' });
    expect(await tokens(self.wallet, mint)).toBeGreaterThan(0n);
  });
});
