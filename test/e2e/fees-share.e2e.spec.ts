import { Keypair, PublicKey, Transaction, VersionedTransaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { NATIVE_MINT } from '@solana/spl-token';
import { PUMP_SDK, feeSharingConfigPda } from '@pump-fun/pump-sdk';
import { shareResponse } from '@svc/contracts';
import { airdrop, type TestCitizen } from '../support/citizens';
import { call } from '../support/http';
import { conforms, CreatorFeesRig, PNG } from '../support/creatorFees';

describe('creator fees: share, read and claim over HTTP', () => {
  const rig = new CreatorFeesRig();
  const { connection, citizen, post, get, actions, deploy, buy, signAndSubmit } = rig;
  let base: string;
  let treasury: string;
  let trader: TestCitizen;

  beforeAll(async () => {
    ({ base, treasury, trader } = await rig.start('fees_share'));
  }, 60_000);
  afterAll(() => rig.close());

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
});
