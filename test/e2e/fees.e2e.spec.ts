import { PublicKey } from '@solana/web3.js';
import { creatorVaultPda, feeSharingConfigPda } from '@pump-fun/pump-sdk';
import { claimResponse, feesResponse } from '@svc/contracts';
import type { TestCitizen } from '../support/citizens';
import { BPS, conforms, CreatorFeesRig, sol } from '../support/creatorFees';

/**
 * Creator fees over HTTP on the bundled chain, every balance checked with web3.js: coins opted into sharing
 * (at deploy, or later through /share, for coins deployed here or elsewhere), what GET /fees reads in their
 * vaults, and claims that distribute sharing coins (90% to the citizen, 10% to the treasury) or collect a
 * citizen's own vaults, on the curve and in the graduated pool, six coins a call.
 */
describe('creator fees: share, read and claim over HTTP', () => {
  const rig = new CreatorFeesRig();
  const { connection, citizen, post, get, lamports, feeOf, sharedVaults, ownVaults, actions, deploy, buy, graduate, signAndSubmit } = rig;
  let treasury: string;
  let rent: bigint;
  let tokenAccountRent: bigint;
  let trader: TestCitizen;

  beforeAll(async () => {
    ({ treasury, rent, tokenAccountRent, trader } = await rig.start('fees'));
  }, 60_000);
  afterAll(() => rig.close());

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
