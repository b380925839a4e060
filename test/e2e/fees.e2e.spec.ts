import { randomBytes } from 'node:crypto';
import { Keypair, PublicKey, Transaction, VersionedTransaction, sendAndConfirmTransaction, type Connection } from '@solana/web3.js';
import { ACCOUNT_SIZE, AccountLayout, NATIVE_MINT, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { PUMP_SDK, creatorVaultPda, feeSharingConfigPda } from '@pump-fun/pump-sdk';
import { coinCreatorVaultAtaPda, coinCreatorVaultAuthorityPda } from '@pump-fun/pump-swap-sdk';
import { bodyValidator, claimResponse, feesResponse, shareResponse, type JsonSchema } from '@svc/contracts';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { call } from '../support/http';
import { ledgerEntries } from '../support/ledger';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const BPS = 10_000n;
const sol = (lamports: bigint) => Number(lamports) / 1e9;
/** The reply is what the route's documented response schema says. */
const conforms = (schema: JsonSchema, body: unknown) => expect(bodyValidator(schema)(structuredClone(body))).toBeNull();

/**
 * Creator fees over HTTP on the bundled chain, every balance checked with web3.js: coins opted into sharing
 * (at deploy, or later through /share, for coins deployed here or elsewhere), what GET /fees reads in their
 * vaults, and claims that distribute sharing coins (90% to the citizen, 10% to the treasury) or collect a
 * citizen's own vaults, on the curve and in the graduated pool, six coins a call.
 */
describe('creator fees: share, read and claim over HTTP', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;
  let treasury: string;
  let rent: bigint;
  let tokenAccountRent: bigint;
  /** Trades the coins under test, so that they accrue creator fees. */
  let trader: TestCitizen;

  beforeAll(async () => {
    db = await freshDatabase('fees');
    server = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('fees'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
      { outboxRecoveryEveryMs: 3_600_000 },
    );
    base = server.url;
    treasury = (await server.services.serviceWallets.wallet('treasury')).publicKey;
    rent = BigInt(await connection().getMinimumBalanceForRentExemption(0, 'confirmed'));
    tokenAccountRent = BigInt(await connection().getMinimumBalanceForRentExemption(ACCOUNT_SIZE, 'confirmed'));
    trader = await citizen('trader', 300);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const connection = (): Connection => server.services.chain.connection;
  async function citizen(prefix: string, fundSol = 0, extra: Record<string, unknown> = {}, own?: Keypair): Promise<TestCitizen> {
    const made = await registerCitizen(base, prefix, extra, own);
    if (fundSol > 0) await airdrop(connection(), made.wallet, fundSol);
    return made;
  }
  const post = (who: TestCitizen, path: string, body: Record<string, unknown> = {}) => call(base, 'POST', path, { key: who.key, body });
  const get = (who: TestCitizen, path: string) => call(base, 'GET', path, { key: who.key });
  const lamports = async (wallet: string | PublicKey) => BigInt(await connection().getBalance(new PublicKey(wallet), 'confirmed'));
  const feeOf = async (signature: string) => BigInt((await connection().getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!.meta!.fee);
  const wsol = async (address: PublicKey) => {
    const info = await connection().getAccountInfo(address, 'confirmed');
    return info ? AccountLayout.decode(info.data).amount : 0n;
  };
  /** A sharing coin's vaults: pump's (lamports above rent) and PumpSwap's (wSOL), as the chain holds them. */
  async function sharedVaults(mint: string): Promise<{ curve: bigint; pool: bigint }> {
    const config = feeSharingConfigPda(new PublicKey(mint));
    const curve = (await lamports(creatorVaultPda(config))) - rent;
    return { curve: curve > 0n ? curve : 0n, pool: await wsol(coinCreatorVaultAtaPda(coinCreatorVaultAuthorityPda(config), NATIVE_MINT, TOKEN_PROGRAM_ID)) };
  }
  async function ownVaults(wallet: string): Promise<{ curve: bigint; pool: bigint }> {
    const creator = new PublicKey(wallet);
    const curve = (await lamports(creatorVaultPda(creator))) - rent;
    return { curve: curve > 0n ? curve : 0n, pool: await wsol(coinCreatorVaultAtaPda(coinCreatorVaultAuthorityPda(creator), NATIVE_MINT, TOKEN_PROGRAM_ID)) };
  }
  const ledger = () => ledgerEntries(base);
  const actions = async (action: string) => (await ledger()).filter((e) => e.type === 'ActionRecorded' && e.data.action === action);
  async function deploy(who: TestCitizen, symbol: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await post(who, '/api/v1/tokens/deploy', { name: `Coin ${symbol}`, symbol, image: PNG, ...extra });
    expect(res.status).toBe(201);
    return res.body.mint;
  }
  async function buy(who: TestCitizen, mint: string, amountSol: number): Promise<void> {
    const res = await post(who, '/api/v1/tokens/buy', { mint, amount_sol: amountSol, slippage_bps: 5000 });
    expect(res.status).toBe(200);
  }
  /** Buys the curve out; resolves once the keeper has migrated the coin to its PumpSwap pool. */
  async function graduate(mint: string): Promise<void> {
    const whale = await citizen('whale', 200);
    const migrated = server.localnet!.keeper!.whenMigrated(new PublicKey(mint));
    await buy(whale, mint, 120);
    await migrated;
  }
  async function signAndSubmit(who: TestCitizen, transaction: string): Promise<{ status: number; body: any }> {
    const tx = VersionedTransaction.deserialize(Buffer.from(transaction, 'base64'));
    tx.sign([who.keypair!]);
    return post(who, '/api/v1/tx/submit', { transaction: Buffer.from(tx.serialize()).toString('base64') });
  }

  it('trades on a sharing coin accrue fees; a claim moves the citizen’s 90% into its wallet and 10% into the treasury', async () => {
    const dev = await citizen('dev', 3);
    const mint = await deploy(dev, 'SHR');
    await buy(trader, mint, 2);
    const accrued = await sharedVaults(mint);
    expect(accrued.curve).toBeGreaterThan(0n);

    const fees = await get(dev, '/api/v1/fees');
    expect(fees.status).toBe(200);
    conforms(feesResponse, fees.body);
    const mine = (accrued.curve * 9_000n) / BPS;
    expect(fees.body).toMatchObject({
      ok: true,
      wallet: dev.wallet,
      total_sol: sol(mine),
      coins: [
        {
          mint,
          symbol: 'SHR',
          sharing: true,
          paid_to: 'sharing',
          graduated: false,
          share_bps: 9000,
          curve_vault_sol: sol(accrued.curve),
          pool_vault_sol: 0,
          pending_sol: sol(accrued.curve),
          claimable_sol: sol(mine),
        },
      ],
      creator_vault: { curve_vault_sol: 0, pool_vault_sol: 0, claimable_sol: 0 },
    });

    const before = { dev: await lamports(dev.wallet), treasury: await lamports(treasury) };
    const claim = await post(dev, '/api/v1/fees/claim');
    expect(claim.status).toBe(200);
    conforms(claimResponse, claim.body);
    expect(claim.body).toMatchObject({
      ok: true,
      executed: true,
      signature: expect.any(String),
      claimed_sol: sol(mine),
      swept: [
        {
          mint,
          symbol: 'SHR',
          source: 'sharing',
          sol: sol(mine),
          distributed_sol: sol(accrued.curve),
          paid: [
            { address: dev.wallet, share_bps: 9000, sol: sol(mine) },
            { address: treasury, share_bps: 1000, sol: sol((accrued.curve * 1_000n) / BPS) },
          ],
          transaction_index: 0,
        },
      ],
      transactions: [{ executed: true, mints: [mint], sol: sol(mine), signature: claim.body.signature }],
      remaining: [],
      skipped: [],
    });
    const fee = await feeOf(claim.body.signature);
    expect((await lamports(dev.wallet)) - before.dev).toBe(mine - fee);
    expect((await lamports(treasury)) - before.treasury).toBe((accrued.curve * 1_000n) / BPS);
    expect((await sharedVaults(mint)).curve).toBeLessThanOrEqual(1n);
    const recorded = (await actions('fee_claim')).filter((e) => e.data.signature === claim.body.signature);
    expect(recorded).toEqual([expect.objectContaining({ actor: dev.id, data: expect.objectContaining({ wallet: dev.wallet, details: expect.objectContaining({ sol: sol(mine) }) }) })]);

    const again = await post(dev, '/api/v1/fees/claim');
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('no_balance');
  });

  it('a coin that does not share pays the citizen’s own vaults: a claim collects the curve vault, and after graduation the pool vault too', async () => {
    const dev = await citizen('solo', 3);
    const mint = await deploy(dev, 'SOLO', { fee_share: false });
    await buy(trader, mint, 1);
    const onCurve = await ownVaults(dev.wallet);
    expect(onCurve.curve).toBeGreaterThan(0n);
    const fees = await get(dev, '/api/v1/fees');
    expect(fees.body).toMatchObject({
      total_sol: sol(onCurve.curve),
      coins: [{ mint, sharing: false, paid_to: 'creator', share_bps: null, curve_vault_sol: null, pool_vault_sol: null, claimable_sol: null }],
      creator_vault: { curve_vault_sol: sol(onCurve.curve), pool_vault_sol: 0, claimable_sol: sol(onCurve.curve) },
    });
    let before = await lamports(dev.wallet);
    const first = await post(dev, '/api/v1/fees/claim');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ executed: true, claimed_sol: sol(onCurve.curve), swept: [{ mint: null, source: 'creator', coins: [mint], sol: sol(onCurve.curve) }] });
    expect((await lamports(dev.wallet)) - before).toBe(onCurve.curve - (await feeOf(first.body.signature)));
    expect(await ownVaults(dev.wallet)).toEqual({ curve: 0n, pool: 0n });

    await graduate(mint);
    await buy(trader, mint, 1);
    const both = await ownVaults(dev.wallet);
    expect(both.curve).toBeGreaterThan(0n);
    expect(both.pool).toBeGreaterThan(0n);
    expect((await get(dev, '/api/v1/fees')).body).toMatchObject({
      coins: [{ mint, graduated: true, paid_to: 'creator' }],
      creator_vault: { curve_vault_sol: sol(both.curve), pool_vault_sol: sol(both.pool), claimable_sol: sol(both.curve + both.pool) },
    });
    before = await lamports(dev.wallet);
    const second = await post(dev, '/api/v1/fees/claim');
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ executed: true, claimed_sol: sol(both.curve + both.pool), swept: [{ source: 'creator', curve_vault_sol: sol(both.curve), pool_vault_sol: sol(both.pool) }] });
    // The pool's wSOL arrives unwrapped: the wSOL account opened for it is closed in the same transaction.
    expect((await lamports(dev.wallet)) - before).toBe(both.curve + both.pool - (await feeOf(second.body.signature)));
    expect(await ownVaults(dev.wallet)).toEqual({ curve: 0n, pool: 0n });

    // Opted in once graduated, its pool’s creator fees are shared too: the claim moves them to pump, then distributes.
    const shared = await post(dev, `/api/v1/tokens/${mint}/share`);
    expect(shared.status).toBe(200);
    expect(shared.body).toMatchObject({ mint, status: 'active', already_sharing: false, pool: expect.any(String), executed: true });
    await buy(trader, mint, 3);
    const pooled = await sharedVaults(mint);
    expect(pooled.pool).toBeGreaterThanOrEqual(tokenAccountRent);
    // The swept wSOL lands in the sharing config's pump vault, which keeps its rent, then pays out.
    const paid = (await lamports(creatorVaultPda(feeSharingConfigPda(new PublicKey(mint))))) + pooled.pool - rent;
    const view = (await get(dev, '/api/v1/fees')).body;
    expect(view.coins).toEqual([
      expect.objectContaining({ mint, sharing: true, graduated: true, pool_vault_sol: sol(pooled.pool), pending_sol: sol(paid), claimable_sol: sol((paid * 9_000n) / BPS) }),
    ]);
    const beforeShared = { dev: await lamports(dev.wallet), treasury: await lamports(treasury) };
    const third = await post(dev, '/api/v1/fees/claim');
    expect(third.status).toBe(200);
    expect(third.body.swept).toEqual([expect.objectContaining({ mint, source: 'sharing', distributed_sol: sol(paid), sol: sol((paid * 9_000n) / BPS) })]);
    expect((await lamports(dev.wallet)) - beforeShared.dev).toBe((paid * 9_000n) / BPS - (await feeOf(third.body.signature)));
    expect((await lamports(treasury)) - beforeShared.treasury).toBe((paid * 1_000n) / BPS);
    expect((await sharedVaults(mint)).pool).toBe(0n);
  }, 120_000);

  it('share is idempotent, finishes a pending deploy or a config without its shares, and opts in coins deployed here or elsewhere', async () => {
    const own = Keypair.generate();
    const self = await citizen('selfdev', 0, { custody: 'self', public_key: own.publicKey.toBase58() }, own);
    await airdrop(connection(), self.wallet, 2);
    const deployed = await post(self, '/api/v1/tokens/deploy', { name: 'Half done', symbol: 'HALF', image: PNG });
    expect(deployed.body).toMatchObject({ executed: false, fee_share: { status: 'pending', transaction: expect.any(String) } });
    const mint = deployed.body.mint as string;
    const create = VersionedTransaction.deserialize(Buffer.from(deployed.body.transaction, 'base64'));
    create.sign([own]);
    expect((await post(self, '/api/v1/tx/submit', { transaction: Buffer.from(create.serialize()).toString('base64') })).body).toMatchObject({ action: 'deploy' });
    expect((await call(base, 'GET', `/api/v1/tokens/${mint}`)).body.fee_share).toMatchObject({ status: 'pending' });

    // The sharing transaction the deploy handed out can still land: asking to share hands the same one out again.
    const pending = await post(self, `/api/v1/tokens/${mint}/share`);
    expect(pending.status).toBe(200);
    conforms(shareResponse, pending.body);
    expect(pending.body).toMatchObject({ mint, status: 'pending', already_sharing: false, executed: false, transaction: deployed.body.fee_share.transaction, fee_payer: self.wallet });
    const submitted = await signAndSubmit(self, pending.body.transaction);
    expect(submitted.body).toMatchObject({ executed: true, action: 'fee_share' });
    const intel = await call(base, 'GET', `/api/v1/tokens/${mint}`);
    expect(intel.body.fee_share).toMatchObject({ status: 'active', signature: submitted.body.signature, shares: [{ address: self.wallet, share_bps: 9000 }, { address: treasury, share_bps: 1000 }] });

    const again = await post(self, `/api/v1/tokens/${mint}/share`, { execute: false });
    expect(again.status).toBe(200);
    conforms(shareResponse, again.body);
    expect(again.body).toEqual({
      ok: true,
      mint,
      status: 'active',
      already_sharing: true,
      pool: null,
      signature: submitted.body.signature,
      shares: [
        { address: self.wallet, share_bps: 9000 },
        { address: treasury, share_bps: 1000 },
      ],
    });
    expect((await actions('fee_share')).filter((e) => (e.data.details as { mint: string }).mint === mint)).toHaveLength(1);

    // Deployed here without sharing, opted in later by a service-custody citizen.
    const dev = await citizen('later', 3);
    const later = await deploy(dev, 'LATER', { fee_share: false });
    const opted = await post(dev, `/api/v1/tokens/${later}/share`);
    conforms(shareResponse, opted.body);
    expect(opted.body).toMatchObject({ mint: later, status: 'active', already_sharing: false, executed: true, signature: expect.any(String), pool: null });
    const config = PUMP_SDK.decodeSharingConfig((await connection().getAccountInfo(feeSharingConfigPda(new PublicKey(later)), 'confirmed'))!);
    expect(config.shareholders.map((s) => [s.address.toBase58(), s.shareBps])).toEqual([
      [dev.wallet, 9000],
      [treasury, 1000],
    ]);
    expect((await call(base, 'GET', `/api/v1/tokens/${later}`)).body.fee_share).toMatchObject({ status: 'active', signature: opted.body.signature });
    expect((await post(dev, `/api/v1/tokens/${later}/share`)).body).toMatchObject({ status: 'active', already_sharing: true, signature: opted.body.signature });

    // Launched elsewhere on pump with the citizen's own key: opted in here, its fees show in GET /fees and are claimed.
    const coin = Keypair.generate();
    const owner = dev.keypair!.publicKey;
    const created = await PUMP_SDK.createV2Instruction({ mint: coin.publicKey, name: 'Elsewhere', symbol: 'ELSE', uri: 'https://example.com/else.json', creator: owner, user: owner, mayhemMode: false });
    await sendAndConfirmTransaction(connection(), new Transaction().add(created), [dev.keypair!, coin], { commitment: 'confirmed' });
    const elsewhere = coin.publicKey.toBase58();
    const outside = await post(dev, `/api/v1/tokens/${elsewhere}/share`);
    expect(outside.body).toMatchObject({ mint: elsewhere, status: 'active', executed: true });
    expect((await call(base, 'GET', `/api/v1/tokens/${elsewhere}`)).body.fee_share).toMatchObject({ status: 'active' });
    await buy(trader, elsewhere, 1);
    const fees = await get(dev, '/api/v1/fees');
    expect(fees.body.coins).toEqual(expect.arrayContaining([expect.objectContaining({ mint: elsewhere, symbol: null, sharing: true, claimable_sol: expect.any(Number) })]));
    const claimed = await post(dev, '/api/v1/fees/claim');
    expect(claimed.body.swept).toEqual([expect.objectContaining({ mint: elsewhere, source: 'sharing' })]);

    // A sharing config created without its shares (the creator alone, admin not revoked): share sets them.
    const bare = await deploy(dev, 'BARE', { fee_share: false });
    const bareConfig = await PUMP_SDK.createFeeSharingConfig({ creator: owner, mint: new PublicKey(bare), pool: null });
    await sendAndConfirmTransaction(connection(), new Transaction().add(bareConfig), [dev.keypair!], { commitment: 'confirmed' });
    const finished = await post(dev, `/api/v1/tokens/${bare}/share`);
    expect(finished.body).toMatchObject({ mint: bare, status: 'active', already_sharing: false, executed: true });
    const set = PUMP_SDK.decodeSharingConfig((await connection().getAccountInfo(feeSharingConfigPda(new PublicKey(bare)), 'confirmed'))!);
    expect([set.adminRevoked, set.shareholders.map((s) => [s.address.toBase58(), s.shareBps])]).toEqual([
      true,
      [
        [dev.wallet, 9000],
        [treasury, 1000],
      ],
    ]);
  }, 60_000);

  it('refuses someone else’s coin (403), a holder_reward coin (400) and bad input, each with its code', async () => {
    const dev = await citizen('owner', 3);
    const mint = await deploy(dev, 'MINE', { fee_share: false });
    const stranger = await citizen('stranger', 1);
    const foreign = await post(stranger, `/api/v1/tokens/${mint}/share`);
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toMatchObject({ code: 'not_creator', message: expect.stringContaining(dev.wallet) });
    const holders = await deploy(dev, 'HOLD', { holder_reward: true });
    const reward = await post(dev, `/api/v1/tokens/${holders}/share`);
    expect(reward.status).toBe(400);
    expect(reward.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('holder_reward') });

    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      ['/api/v1/tokens/not-a-key/share', {}, 400, 'invalid_pubkey'],
      [`/api/v1/tokens/${Keypair.generate().publicKey.toBase58()}/share`, {}, 404, 'unknown_mint'],
      [`/api/v1/tokens/${NATIVE_MINT.toBase58()}/share`, {}, 400, 'invalid_request'],
      [`/api/v1/tokens/${mint}/share`, { execute: 'yes' }, 400, 'invalid_request'],
      [`/api/v1/tokens/${mint}/share`, { fee_share_bps: 5000 }, 400, 'invalid_request'],
      ['/api/v1/fees/claim', { coins: 3 }, 400, 'invalid_request'],
      ['/api/v1/fees/claim', {}, 400, 'no_balance'],
    ];
    for (const [path, body, status, code] of cases) {
      const res = await post(stranger, path, body);
      expect([path, res.status, res.body.error?.code]).toEqual([path, status, code]);
    }
    expect((await call(base, 'GET', '/api/v1/fees')).status).toBe(401);
    expect((await call(base, 'POST', '/api/v1/fees/claim', { body: {} })).status).toBe(401);
    expect((await get(stranger, '/api/v1/fees')).body).toMatchObject({ ok: true, total_sol: 0, coins: [], creator_vault: { claimable_sol: 0 } });
  });

  it('a claim over 8 coins takes the 6 largest, and a second call takes the rest', async () => {
    const dev = await citizen('many', 6);
    const mints: string[] = [];
    for (let i = 0; i < 8; i++) mints.push(await deploy(dev, `M${i}`));
    // Coin i gets fees in proportion to i + 1: the largest are the last six.
    for (const [i, mint] of mints.entries()) await buy(trader, mint, 0.1 * (i + 1));
    const waiting = await Promise.all(mints.map((m) => sharedVaults(m)));
    const share = (i: number) => (waiting[i]!.curve * 9_000n) / BPS;
    const fees = await get(dev, '/api/v1/fees');
    expect(fees.body.coins.map((c: { mint: string }) => c.mint)).toEqual([...mints].reverse());
    expect(fees.body.total_sol).toBe(sol(mints.reduce((sum, _m, i) => sum + share(i), 0n)));

    const before = await lamports(dev.wallet);
    const first = await post(dev, '/api/v1/fees/claim');
    expect(first.status).toBe(200);
    const largest = [...mints].reverse().slice(0, 6);
    expect(first.body.swept.map((s: { mint: string }) => s.mint)).toEqual(largest);
    expect(first.body.remaining.map((r: { mint: string }) => r.mint)).toEqual([mints[1], mints[0]]);
    // Six sweeps of coins on their curves take 1,229 bytes (489 for one, 148 a coin more): one transaction.
    expect(first.body.transactions).toHaveLength(1);
    const firstSigs = first.body.transactions.map((t: { signature: string }) => t.signature);
    expect(firstSigs.every((s: unknown) => typeof s === 'string')).toBe(true);
    let fee = 0n;
    for (const s of firstSigs) fee += await feeOf(s);
    const expected = [2, 3, 4, 5, 6, 7].reduce((sum, i) => sum + share(i), 0n);
    expect(first.body.claimed_sol).toBe(sol(expected));
    expect((await lamports(dev.wallet)) - before).toBe(expected - fee);
    for (const s of firstSigs) {
      const wire = (await connection().getTransaction(s, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!.transaction.message.serialize().length;
      expect(wire).toBeLessThanOrEqual(1232);
    }

    const second = await post(dev, '/api/v1/fees/claim');
    expect(second.status).toBe(200);
    expect(second.body.swept.map((s: { mint: string }) => s.mint)).toEqual([mints[1], mints[0]]);
    expect(second.body).toMatchObject({ remaining: [], claimed_sol: sol(share(0) + share(1)) });
    const third = await post(dev, '/api/v1/fees/claim');
    expect(third.body.error.code).toBe('no_balance');
  }, 120_000);

  it('splits a claim that does not fit 1,232 bytes into several fee_claim transactions: four graduated sharing coins go as three and one', async () => {
    const dev = await citizen('pools', 4);
    const mints: string[] = [];
    for (let i = 0; i < 4; i++) mints.push(await deploy(dev, `G${i}`));
    for (const mint of mints) {
      await graduate(mint);
      await buy(trader, mint, 1);
    }
    const paid = await Promise.all(
      mints.map(async (mint) => (await lamports(creatorVaultPda(feeSharingConfigPda(new PublicKey(mint))))) + (await sharedVaults(mint)).pool - rent),
    );
    const mine = paid.reduce((sum, p) => sum + (p * 9_000n) / BPS, 0n);
    const before = await lamports(dev.wallet);
    const claim = await post(dev, '/api/v1/fees/claim');
    expect(claim.status).toBe(200);
    conforms(claimResponse, claim.body);
    // A graduated coin's sweep (transfer_creator_fees_to_pump + distribute_creator_fees) takes 233 bytes more; three fit in 1,200.
    expect(claim.body.transactions.map((t: { mints: string[] }) => t.mints.length)).toEqual([3, 1]);
    expect(claim.body).toMatchObject({ executed: true, claimed_sol: sol(mine), remaining: [], signature: claim.body.transactions[0].signature });
    expect(new Set(claim.body.swept.map((s: { mint: string }) => s.mint))).toEqual(new Set(mints));
    let fee = 0n;
    for (const t of claim.body.transactions) fee += await feeOf(t.signature);
    expect((await lamports(dev.wallet)) - before).toBe(mine - fee);
    for (const mint of mints) expect(await sharedVaults(mint)).toEqual({ curve: expect.any(BigInt), pool: 0n });
    const recorded = await actions('fee_claim');
    for (const t of claim.body.transactions) expect(recorded.filter((e) => e.data.signature === t.signature)).toHaveLength(1);
  }, 120_000);

  it('two claims of the same fees at once send one transaction', async () => {
    const dev = await citizen('twice', 3);
    const mint = await deploy(dev, 'TWICE');
    await buy(trader, mint, 1);
    const before = (await actions('fee_claim')).length;
    const replies = await Promise.all([post(dev, '/api/v1/fees/claim'), post(dev, '/api/v1/fees/claim')]);
    const landed = replies.filter((r) => r.status === 200);
    expect(landed).toHaveLength(1);
    const other = replies.find((r) => r.status !== 200)!;
    expect([[409, 'action_in_progress'], [400, 'no_balance']]).toContainEqual([other.status, other.body.error.code]);
    expect((await actions('fee_claim')).length - before).toBe(1);
  });

  it('hands a claim out unsigned with execute=false; asked again it is the same; signed and submitted it is the fee_claim', async () => {
    const dev = await citizen('handout', 3);
    const mint = await deploy(dev, 'HAND');
    await buy(trader, mint, 1);
    const accrued = await sharedVaults(mint);
    const handed = await post(dev, '/api/v1/fees/claim', { execute: false });
    expect(handed.status).toBe(200);
    conforms(claimResponse, handed.body);
    expect(handed.body).toMatchObject({ executed: false, transaction: expect.any(String), fee_payer: dev.wallet, transactions: [{ executed: false, mints: [mint] }] });
    expect(await sharedVaults(mint)).toEqual(accrued);
    const again = await post(dev, '/api/v1/fees/claim', { execute: false });
    expect(again.body.transaction).toBe(handed.body.transaction);
    const refused = await post(dev, '/api/v1/fees/claim');
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('action_in_progress');

    const before = await lamports(dev.wallet);
    const submitted = await signAndSubmit(dev, handed.body.transaction);
    expect(submitted.body).toMatchObject({ executed: true, action: 'fee_claim' });
    const mine = (accrued.curve * 9_000n) / BPS;
    expect((await lamports(dev.wallet)) - before).toBe(mine - (await feeOf(submitted.body.signature)));
    expect((await actions('fee_claim')).filter((e) => e.data.signature === submitted.body.signature)).toHaveLength(1);
  });
});
