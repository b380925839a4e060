import { randomBytes } from 'node:crypto';
import { LAMPORTS_PER_SOL, PublicKey, type Connection, type VersionedTransactionResponse } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, getAssociatedTokenAddressSync, getMint } from '@solana/spl-token';
import { OnlinePumpSdk, creatorVaultPda, feeSharingConfigPda, userVolumeAccumulatorPda } from '@pump-fun/pump-sdk';
import { userVolumeAccumulatorPda as poolVolumeAccumulatorPda } from '@pump-fun/pump-swap-sdk';
import { SolanaChain } from '@svc/chain';
import { Projector, projections, treasury as treasuryModel } from '@svc/projections';
import { TREASURY_WALLET, buildRuntime, createLogger, type Runtime } from '@svc/runtime';
import { startTreasuryWorker, type RunningTreasury } from '../../apps/workers/src/treasury';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { DoorbellReceiver } from '../support/doorbellReceiver';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call } from '../support/http';
import { ledgerEntries } from '../support/ledger';
import { WsListener } from '../support/ws';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const RESERVE_SOL = 0.05;

/**
 * The treasury on the bundled chain, driven over HTTP and checked with web3.js: @treasury is the ledger's first
 * citizen; a coin deployed with fee sharing pays it 10% of its creator fees; a cycle distributes them, spends the
 * treasury's SOL on the service token (deployed by the embedded start) and burns what it bought; the totals equal
 * what moved on-chain and a replay of the ledger rebuilds them; two cycles asked for at once run once.
 */
describe('the treasury: fee share, buyback and burn', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let receiver: DoorbellReceiver;
  let base: string;
  let treasuryWallet: string;

  beforeAll(async () => {
    db = await freshDatabase('treasury');
    receiver = await DoorbellReceiver.start();
    server = await startEmbedded(
      testConfig({
        DATABASE_URL: db.url,
        REDIS_URL,
        DATA_DIR: tempDir('treasury'),
        SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
        DOORBELL_ALLOW_LOOPBACK: 'true',
        DOORBELL_CA_FILE: receiver.caFile,
        TREASURY_RESERVE_SOL: String(RESERVE_SOL),
      }),
      { outboxRecoveryEveryMs: 3_600_000 },
    );
    base = server.url;
    treasuryWallet = (await server.services.serviceWallets.wallet(TREASURY_WALLET)).publicKey;
  }, 90_000);
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await db?.drop();
  });

  const connection = (): Connection => server.services.chain.connection;
  const lamports = async (wallet: string) => BigInt(await connection().getBalance(new PublicKey(wallet), 'confirmed'));
  const supply = async (mint: string) => (await getMint(connection(), new PublicKey(mint), 'confirmed', TOKEN_2022_PROGRAM_ID)).supply;
  const transaction = async (signature: string) => (await connection().getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!;
  const treasuryView = async () => (await call(base, 'GET', '/api/v1/treasury')).body;

  const ledger = () => ledgerEntries(base);

  /** A wallet's lamports before and after a transaction, from its meta, and the accounts it opened. */
  function movement(tx: VersionedTransactionResponse, wallet: string) {
    const keys = tx.transaction.message.getAccountKeys({ accountKeysFromLookups: tx.meta!.loadedAddresses }).keySegments().flat();
    const at = (address: string) => keys.findIndex((k) => k.toBase58() === address);
    const i = at(wallet);
    const opened = (address: string) => (at(address) >= 0 && tx.meta!.preBalances[at(address)] === 0 ? BigInt(tx.meta!.postBalances[at(address)]!) : 0n);
    const tokens = (balances: NonNullable<typeof tx.meta>['postTokenBalances'], mint: string) =>
      (balances ?? []).filter((b) => b.owner === wallet && b.mint === mint).reduce((sum, b) => sum + BigInt(b.uiTokenAmount.amount), 0n);
    return {
      change: BigInt(tx.meta!.postBalances[i]!) - BigInt(tx.meta!.preBalances[i]!),
      fee: BigInt(tx.meta!.fee),
      opened,
      tokenChange: (mint: string) => tokens(tx.meta!.postTokenBalances, mint) - tokens(tx.meta!.preTokenBalances, mint),
    };
  }

  it('has @treasury as the ledger’s first citizen, reserves its handle, and deployed the service token at first boot', async () => {
    const entries = await ledger();
    expect(entries[0]).toMatchObject({ seq: 0, type: 'CitizenRegistered', data: { handle: 'treasury', wallet: treasuryWallet, custody: 'service' } });
    const profile = await call(base, 'GET', '/api/v1/agents/treasury');
    expect(profile.status).toBe(200);
    expect(profile.body.agent).toMatchObject({ handle: 'treasury', wallet: treasuryWallet });

    for (const handle of ['treasury', 'Treasury', 'TREASURY']) {
      const taken = await call(base, 'POST', '/api/v1/register', { body: { handle, model: 'm' } });
      expect([taken.status, taken.body.error.code]).toEqual([409, 'handle_taken']);
    }

    const view = await treasuryView();
    expect(view).toMatchObject({ ok: true, handle: 'treasury', agent_id: entries[0]!.actor, wallet: treasuryWallet, fee_share_bps: 1000, burn: true, last_cycle: null });
    expect(view.token_mint).toEqual(expect.any(String));
    // The service token is @treasury's own coin on the ledger, and a pump coin on its curve on the chain.
    const deployed = entries.find((e) => e.type === 'ActionRecorded' && e.data.action === 'deploy' && (e.data.details as any).mint === view.token_mint)!;
    expect(deployed).toMatchObject({ actor: entries[0]!.actor, data: { wallet: treasuryWallet, details: { service_token: true } } });
    expect(view.recent).toEqual([expect.objectContaining({ action: 'deploy', signature: deployed.data.signature, mint: view.token_mint })]);
    expect(await supply(view.token_mint)).toBe(1_000_000_000_000_000n);
    const token = await call(base, 'GET', `/api/v1/tokens/${view.token_mint}`);
    expect(token.body).toMatchObject({ venue: 'pump', symbol: 'SOCIETY' });
  });

  let creator: TestCitizen;
  let coin: string;

  it('the treasury’s 10% arrives, is spent on the service token, and that token’s supply falls by the amount bought', async () => {
    const tokenMint = (await treasuryView()).token_mint as string;
    creator = await registerCitizen(base, 'share');
    await airdrop(connection(), creator.wallet, 3);
    const deployed = await call(base, 'POST', '/api/v1/tokens/deploy', { key: creator.key, body: { name: 'Shared', symbol: 'SHARE', image: PNG } });
    expect(deployed.status).toBe(201);
    expect(deployed.body.fee_share).toMatchObject({ status: 'active', shares: [{ address: creator.wallet, share_bps: 9000 }, { address: treasuryWallet, share_bps: 1000 }] });
    coin = deployed.body.mint;

    // Trades in the coin put creator fees in its sharing config's vault.
    const trader = await registerCitizen(base, 'trader');
    await airdrop(connection(), trader.wallet, 25);
    expect((await call(base, 'POST', '/api/v1/tokens/buy', { key: trader.key, body: { mint: coin, amount_sol: 10 } })).status).toBe(200);
    expect((await call(base, 'POST', '/api/v1/tokens/sell', { key: trader.key, body: { mint: coin, percent: 100 } })).status).toBe(200);
    const pump = new OnlinePumpSdk(connection());
    const accrued = BigInt((await pump.getCreatorVaultBalance(feeSharingConfigPda(new PublicKey(coin)))).toString());
    expect(accrued).toBeGreaterThan(0n);

    // Someone listens: on /ws, and a doorbell that asked for buybacks only.
    const listener = await WsListener.open(`ws://127.0.0.1:${server.port}/ws`);
    const bell = await call(base, 'POST', '/api/v1/doorbell', { key: creator.key, body: { url: receiver.url('/buybacks'), kinds: ['buyback'] } });
    expect(bell.status).toBe(201);
    expect(bell.body.doorbell.kinds).toEqual(['buyback']);

    const creatorBefore = await lamports(creator.wallet);
    const supplyBefore = await supply(tokenMint);
    const outcome = await server.workers.treasury.runCycle();
    expect(outcome.ran).toBe(true);
    const cycle = (outcome as Extract<typeof outcome, { ran: true }>).cycle;
    expect(cycle).toMatchObject({ cycle: 1, skipped_reason: null });
    const [distribution, buyback, burn] = cycle.signatures;
    expect(cycle.signatures).toHaveLength(3);

    // Distribution: the vault paid out, 9,000 bps to the creator and 1,000 to the treasury, to the lamport.
    const distributed = movement(await transaction(distribution!), treasuryWallet);
    const received = distributed.change + distributed.fee;
    expect(received).toBe((accrued * 1000n) / 10_000n);
    expect((await lamports(creator.wallet)) - creatorBefore).toBe((accrued * 9000n) / 10_000n);
    expect(BigInt((await pump.getCreatorVaultBalance(feeSharingConfigPda(new PublicKey(coin)))).toString())).toBe(0n);
    const afterDistribution = (await transaction(distribution!)).meta!.postBalances[0]!;

    // Buyback: everything above the reserve, the 10% with it, went into the service token.
    const bought = movement(await transaction(buyback!), treasuryWallet);
    const boughtTx = await transaction(buyback!);
    expect(boughtTx.transaction.message.staticAccountKeys[0]!.toBase58()).toBe(treasuryWallet);
    expect(boughtTx.meta!.preBalances[0]).toBe(afterDistribution);
    // The rent of the treasury's own accounts the first buy opened is not a price: its token account and volume accumulators.
    const ownAccounts = [
      getAssociatedTokenAddressSync(new PublicKey(tokenMint), new PublicKey(treasuryWallet), true, TOKEN_2022_PROGRAM_ID),
      userVolumeAccumulatorPda(new PublicKey(treasuryWallet)),
      poolVolumeAccumulatorPda(new PublicKey(treasuryWallet)),
    ].map((a) => a.toBase58());
    const rent = ownAccounts.reduce((sum, a) => sum + bought.opened(a), 0n);
    expect(rent).toBeGreaterThan(0n);
    const spent = -bought.change - bought.fee - rent;
    const committed = BigInt(afterDistribution) - BigInt(RESERVE_SOL * LAMPORTS_PER_SOL);
    // The trade takes what it was given, less the few lamports buy_exact_sol_in's fee rounding keeps back, plus, on the
    // coin's first trade, the rent that lifts its creator vault (the treasury's own, as the creator) to rent exemption.
    const topUp = bought.opened(creatorVaultPda(new PublicKey(treasuryWallet)).toBase58()) > 0n ? BigInt(await connection().getMinimumBalanceForRentExemption(0)) : 0n;
    expect(spent).toBeLessThanOrEqual(committed + topUp);
    expect(committed + topUp - spent).toBeLessThan(10n);
    expect(spent).toBeGreaterThan(received);
    const tokensBought = bought.tokenChange(tokenMint);
    expect(tokensBought).toBeGreaterThan(0n);

    // Burn: the supply fell by exactly what was bought, and the treasury holds none.
    const supplyAfter = await supply(tokenMint);
    expect(supplyBefore - supplyAfter).toBe(tokensBought);
    expect(movement(await transaction(burn!), treasuryWallet).tokenChange(tokenMint)).toBe(-tokensBought);
    expect((await connection().getTokenAccountBalance(new PublicKey(ownAccounts[0]!), 'confirmed')).value.amount).toBe('0');

    // Each is a ledger transaction of @treasury with its signature; the buyback is announced as `buyback`.
    const entries = await ledger();
    const treasuryId = entries[0]!.actor;
    const recorded = entries.filter((e) => e.actor === treasuryId && e.type === 'ActionRecorded' && cycle.signatures.includes(e.data.signature as string));
    expect(recorded.map((e) => [e.data.action, e.data.signature])).toEqual([
      ['fee_distribution', distribution],
      ['buyback', buyback],
      ['burn', burn],
    ]);
    expect(recorded[0]!.data.details).toMatchObject({ mint: coin, treasury_share_bps: 1000 });
    expect(recorded[1]!.data.details).toMatchObject({ mint: tokenMint, venue: 'pump', spent_sol: Number(committed) / LAMPORTS_PER_SOL });
    expect(recorded[2]!.data.details).toMatchObject({ mint: tokenMint, burned_raw: tokensBought.toString(), reason: 'bought' });
    const frame = await listener.next((f) => f.kind === 'buyback');
    expect(frame).toMatchObject({ kind: 'buyback', seq: recorded[1]!.seq, actor: treasuryId, data: { action: 'buyback', signature: buyback } });
    expect(listener.frames.filter((f) => f.actor === treasuryId).map((f) => f.kind)).toEqual(['action', 'buyback', 'action']);
    listener.close();
    await receiver.waitFor(() => receiver.on('/buybacks').length >= 1);
    expect(receiver.on('/buybacks').map((r) => [r.json.kind, r.json.seq, r.json.data.signature])).toEqual([['buyback', recorded[1]!.seq, buyback]]);

    // GET /treasury: the totals are what moved on-chain.
    const view = await treasuryView();
    expect(view.totals).toMatchObject({
      fees_distributed_lamports: received.toString(),
      sol_spent_lamports: spent.toString(),
      tokens_bought_raw: tokensBought.toString(),
      tokens_burned_raw: tokensBought.toString(),
      fees_distributed_sol: Number(received) / LAMPORTS_PER_SOL,
      tokens_bought: Number(tokensBought) / 1e6,
      tokens_burned: Number(tokensBought) / 1e6,
      coins_sharing: 1,
      distributions: 1,
      buybacks: 1,
      burns: 1,
    });
    expect(view.recent.slice(0, 3).map((r: any) => [r.action, r.signature])).toEqual([
      ['burn', burn],
      ['buyback', buyback],
      ['fee_distribution', distribution],
    ]);
    expect(view.last_cycle).toEqual(cycle);
    expect(view.sol).toBe(Number(await lamports(treasuryWallet)) / LAMPORTS_PER_SOL);
    expect(view.sol).toBeLessThan(RESERVE_SOL);
  }, 120_000);

  it('a cycle with nothing above the reserve distributes nothing and buys nothing, and says why', async () => {
    // What a cycle whose process died left in the outbox, leased for minutes: this cycle holds the claim now, so it
    // settles the row at once (nothing was signed: the row goes) instead of waiting for the lease.
    const { pipeline } = server.services;
    const treasuryId = (await ledger())[0]!.actor;
    const record = { type: 'RecordAction', agentId: treasuryId, data: { action: 'burn', wallet: treasuryWallet, details: {} } };
    expect(await pipeline.outbox.reserve({ id: 'act_dead_cycle', attemptId: 'dead', agentId: treasuryId, action: 'burn', record, summary: {}, leaseMs: 600_000 })).toEqual({ ok: true });
    const outcome = await server.workers.treasury.runCycle();
    expect(await pipeline.outbox.get('act_dead_cycle')).toBeUndefined();
    expect(outcome).toMatchObject({ ran: true, cycle: { cycle: 2, signatures: [], sol_spent: 0, tokens_burned: 0, skipped_reason: expect.stringContaining('reserve') } });
    expect((await treasuryView()).last_cycle).toMatchObject({ cycle: 2, skipped_reason: expect.stringContaining('reserve') });
  });

  describe('beside a second workers process on the same database', () => {
    let second: Runtime;
    let secondTreasury: RunningTreasury;

    beforeAll(async () => {
      const { config } = server.services;
      second = await buildRuntime(
        testConfig({ DATABASE_URL: config.databaseUrl, REDIS_URL, REDIS_PREFIX: config.redisPrefix, DATA_DIR: tempDir('treasury-second'), SERVICE_MASTER_KEY: config.serviceMasterKey, SOLANA_RPC_URL: server.solanaRpcUrl, TREASURY_RESERVE_SOL: String(RESERVE_SOL) }),
        createLogger(testConfig({}), 'svc-second'),
      );
      await second.chain.close();
      // The bundled chain's WebSocket is on a free port, not the RPC port + 1 that SOLANA_RPC_URL implies.
      second.chain = new SolanaChain(server.services.chain.options);
      secondTreasury = await startTreasuryWorker(second);
    }, 60_000);
    afterAll(async () => {
      await secondTreasury?.stop();
      await second?.close();
    });

    it('two cycles asked for at once run once', async () => {
      await airdrop(connection(), treasuryWallet, 1);
      const before = (await ledger()).length;
      const outcomes = await Promise.all([server.workers.treasury.runCycle(), secondTreasury.runCycle()]);
      expect(outcomes.map((o) => o.ran).sort()).toEqual([false, true]);
      const ran = outcomes.find((o) => o.ran) as Extract<(typeof outcomes)[number], { ran: true }>;
      expect(ran.cycle).toMatchObject({ cycle: 3, skipped_reason: null });
      expect(ran.cycle.signatures).toHaveLength(2);
      const added = (await ledger()).slice(before);
      expect(added.map((e) => e.data.action)).toEqual(['buyback', 'burn']);
      expect((await treasuryView()).totals).toMatchObject({ buybacks: 2, burns: 2 });
    }, 60_000);
  });

  it('a replay of the ledger rebuilds the totals exactly', async () => {
    const { services } = server;
    const live = await treasuryModel.totals(services.readModel.db, services.readModel.schema);
    const replay = await new Projector({ database: services.database, store: services.store, projections, schema: 'rm_treasury_replay' }).init();
    await replay.catchUp();
    expect(await treasuryModel.totals(services.readModel.db, 'rm_treasury_replay')).toEqual(live);
    expect(await treasuryModel.recentActions(services.readModel.db, 'rm_treasury_replay', 50)).toEqual(
      await treasuryModel.recentActions(services.readModel.db, services.readModel.schema, 50),
    );
    const onChain = await supply((await treasuryView()).token_mint);
    expect(1_000_000_000_000_000n - onChain).toBe(live.tokens_burned_raw);
    expect(live.tokens_burned_raw).toBe(live.tokens_bought_raw);
  });
});
