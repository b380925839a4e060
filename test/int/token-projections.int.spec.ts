import { Keypair } from '@solana/web3.js';
import { sql } from 'kysely';
import type { MarketState } from '@svc/chain';
import { ledgerModel, type ActionName, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LEDGER_STREAM, LedgerWriter, PostgresEventStore, type LedgerEntry } from '@svc/ledger';
import { MarketStore } from '@svc/marketdata';
import { Projector, handles, projections, rebuildReadModels, tokens } from '@svc/projections';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { executeInOrder, registerCitizenCommand } from '../support/ledgerModel';

const TABLES = ['tokens', 'token_fee_shares', 'agent_mints'];
const WSOL = 'So11111111111111111111111111111111111111112';
const key = () => Keypair.generate().publicKey.toBase58();
const [MINT_A, MINT_B, FOREIGN] = [key(), key(), key()];
const wallet = (n: number) => `W${n}`;

async function dump(database: SqlDatabase, schema: string): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) out[table] = (await sql.raw(`select * from ${schema}.${table} order by 1, 2`).execute(database.db)).rows;
  return out;
}

const register = (n: number) => registerCitizenCommand(n, `h${n}`, { wallet: wallet(n) });
const action = (n: number, name: ActionName, details: Record<string, unknown>, signature: string): LedgerCommand => ({
  type: 'RecordAction',
  agentId: `agent_${n}`,
  data: { action: name, signature, wallet: wallet(n), details },
});
const shares = [
  { address: wallet(1), share_bps: 9000 },
  { address: 'TREASURY', share_bps: 1000 },
];
const deploy = (n: number, mint: string, extra: Record<string, unknown>, signature: string) =>
  action(n, 'deploy', {
    mint,
    bonding_curve: `curve-of-${mint}`,
    creator: wallet(n),
    name: `Coin ${mint.slice(0, 4)}`,
    symbol: 'CN',
    description: null,
    image: 'https://example.com/i.png',
    metadata_uri: 'https://example.com/m.json',
    links: { twitter: 'https://x.com/coin' },
    mayhem: false,
    holder_reward: false,
    dev_buy: { sol: 0.1, quoted_tokens: 3_000_000, min_tokens: 2_700_000 },
    fee_share: { status: 'pending', shares },
    ...extra,
  }, signature);

describe('token read models', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: PostgresEventStore;
  let written: LedgerEntry[];

  beforeAll(async () => {
    db = await freshDatabase('token_rm');
    database = await openDatabase({ url: db.url, dataDir: tempDir('token-rm') });
    store = await new PostgresEventStore(database).init();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    const commands: LedgerCommand[] = [
      register(1),
      register(2),
      register(3),
      // A sharing record of a coin launched elsewhere, and one that lands before its coin's deploy record.
      action(3, 'fee_share', { mint: FOREIGN, status: 'active', shares }, 'SIG_share_foreign'),
      action(1, 'fee_share', { mint: MINT_A, status: 'active', shares }, 'SIG_share_a'),
      deploy(1, MINT_A, {}, 'SIG_deploy_a'),
      action(2, 'buy', { mint: MINT_A, venue: 'pump', route: 'r', spent_sol: 0.5, quoted_tokens: 1e7, min_tokens: 9e6 }, 'SIG_buy_a'),
      deploy(2, MINT_B, { holder_reward: true, creator: 'HOLDERS_PDA', fee_share: { status: 'off', shares: [] }, links: {} }, 'SIG_deploy_b'),
      action(2, 'sell', { mint: MINT_A, venue: 'pump', route: 'r', sold_tokens: 5e6, quoted_sol: 0.2, min_sol: 0.19, closed_token_account: false }, 'SIG_sell_a'),
      action(3, 'swap', { venue: 'jupiter', route: 'r', input_mint: WSOL, output_mint: MINT_B, in_amount: 1.5, quoted_out: 4e7, min_out: 3e7, price_impact_pct: 1 }, 'SIG_swap_into_b'),
      action(3, 'swap', { venue: 'jupiter', route: 'r', input_mint: MINT_B, output_mint: WSOL, in_amount: 1e7, quoted_out: 0.7, min_out: 0.6, price_impact_pct: 1 }, 'SIG_swap_out_of_b'),
      action(2, 'transfer', { from: wallet(2), to: wallet(3), to_agent_id: 'agent_3', amount: 1000, mint: MINT_A, memo: null }, 'SIG_send_a'),
      action(2, 'burn', { mint: MINT_A, burned_tokens: 10, supply_before: 1e9, supply_after_estimate: 1e9 - 10, closed_token_account: false }, 'SIG_burn_a'),
      action(3, 'buy', { mint: FOREIGN, venue: 'jupiter', route: 'r', spent_sol: 2, quoted_tokens: 5, min_tokens: 4 }, 'SIG_buy_foreign'),
      action(1, 'transfer', { from: wallet(1), to: wallet(2), to_agent_id: 'agent_2', amount: 0.5, mint: null, memo: 'sol only' }, 'SIG_send_sol'),
    ];
    await executeInOrder(writer, commands);
    written = (await store.readForward(LEDGER_STREAM, 0, 1000)).map((e) => JSON.parse(e.data) as LedgerEntry);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await db?.drop();
  });

  const seqOf = (signature: string) => written.find((e) => (e.data as { signature?: string }).signature === signature)!.seq;

  it('projects deploys, sharing and trades in small batches, the same rows as in one, and the same again when replayed', async () => {
    // Three entries a batch: a coin's deploy, its sharing record and its trades land in different batches.
    const small = await new Projector({ database, store, projections, schema: 'rm', batchSize: 3 }).init();
    await small.catchUp();
    const once = await dump(database, 'rm');
    expect(once.tokens).toHaveLength(2);

    const batch = await store.readForward(LEDGER_STREAM, 0, 1000);
    const parsed = batch.map((e) => ({ entry: JSON.parse(e.data) as LedgerEntry, bytes: e.data }));
    await database.db.transaction().execute(async (trx) => {
      for (const projection of projections) {
        const mine = parsed.filter((p) => handles(projection, p.entry.type));
        if (mine.length > 0) await projection.apply(trx, 'rm', mine);
      }
    });
    expect(await dump(database, 'rm')).toEqual(once);

    // The same ledger in one batch, from nothing, into another schema.
    const whole = await new Projector({ database, store, projections, schema: 'rm_whole', batchSize: 1000 }).init();
    await whole.catchUp();
    expect(await dump(database, 'rm_whole')).toEqual(once);
  });

  it('lists coins newest first with who deployed them, what the deploy said, their sharing and their trades', async () => {
    const kdb = database.db;
    const list = await tokens.listTokens(kdb, 'rm', { limit: 10 });
    expect(list.map((t) => t.mint)).toEqual([MINT_B, MINT_A]);
    expect((await tokens.listTokens(kdb, 'rm', { limit: 10, beforeSeq: list[0]!.seq })).map((t) => t.mint)).toEqual([MINT_A]);

    const a = (await tokens.findToken(kdb, 'rm', MINT_A))!;
    expect(a).toMatchObject({
      mint: MINT_A,
      name: `Coin ${MINT_A.slice(0, 4)}`,
      symbol: 'CN',
      description: null,
      image: 'https://example.com/i.png',
      metadata_uri: 'https://example.com/m.json',
      links: { twitter: 'https://x.com/coin' },
      bonding_curve: `curve-of-${MINT_A}`,
      creator: wallet(1),
      mayhem: false,
      holder_reward: false,
      dev_buy: { sol: 0.1, quoted_tokens: 3_000_000, min_tokens: 2_700_000 },
      // Pending in the deploy record; active by the sharing record, although that was recorded first.
      fee_share: { status: 'active', shares, signature: 'SIG_share_a' },
      deployed_by: { agent_id: 'agent_1', handle: 'h1' },
      wallet: wallet(1),
      signature: 'SIG_deploy_a',
      seq: seqOf('SIG_deploy_a'),
      deployed_at: written[seqOf('SIG_deploy_a')]!.at,
      trades: { buys: 1, sells: 1, buy_volume_sol: 0.5, sell_volume_sol: 0.2, last_trade_at: written[seqOf('SIG_sell_a')]!.at },
      // The burn is the last action naming the coin.
      last_action_seq: seqOf('SIG_burn_a'),
    });
    const b = (await tokens.findToken(kdb, 'rm', MINT_B))!;
    expect(b).toMatchObject({
      holder_reward: true,
      creator: 'HOLDERS_PDA',
      links: {},
      fee_share: { status: 'off', shares: [], signature: null },
      deployed_by: { agent_id: 'agent_2', handle: 'h2' },
      // Swaps to and from SOL are trades too.
      trades: { buys: 1, sells: 1, buy_volume_sol: 1.5, sell_volume_sol: 0.7 },
    });
    expect(await tokens.findToken(kdb, 'rm', FOREIGN)).toBeUndefined();
    expect(await tokens.feeShareOf(kdb, 'rm', FOREIGN)).toEqual({ status: 'active', shares, signature: 'SIG_share_foreign' });
    expect((await tokens.tokensByDeployer(kdb, 'rm', 'agent_2', 10)).map((t) => t.mint)).toEqual([MINT_B]);
    expect(await tokens.countTokens(kdb, 'rm')).toBe(2);
    expect(await tokens.allMints(kdb, 'rm')).toEqual([MINT_B, MINT_A]);
  });

  it('knows which coins each citizen touched, and when each coin last moved on the ledger', async () => {
    const kdb = database.db;
    const pairs = await sql<{ agent_id: string; mint: string; last_seq: number }>`select agent_id, mint, last_seq from rm.agent_mints order by agent_id, mint`.execute(kdb);
    const expected = [
      { agent_id: 'agent_1', mint: MINT_A, last_seq: seqOf('SIG_deploy_a') },
      { agent_id: 'agent_2', mint: MINT_A, last_seq: seqOf('SIG_burn_a') },
      { agent_id: 'agent_2', mint: MINT_B, last_seq: seqOf('SIG_deploy_b') },
      // The recipient of a token transfer may hold the coin now.
      { agent_id: 'agent_3', mint: FOREIGN, last_seq: seqOf('SIG_buy_foreign') },
      { agent_id: 'agent_3', mint: MINT_A, last_seq: seqOf('SIG_send_a') },
      { agent_id: 'agent_3', mint: MINT_B, last_seq: seqOf('SIG_swap_out_of_b') },
    ].sort((x, y) => (x.agent_id + x.mint < y.agent_id + y.mint ? -1 : 1));
    expect(pairs.rows).toEqual(expected);
    expect(await tokens.lastActionSeq(kdb, 'rm', MINT_A)).toBe(seqOf('SIG_burn_a'));
    expect(await tokens.lastActionSeq(kdb, 'rm', key())).toBe(-1);
    const held = await tokens.heldMints(kdb, 'rm', 2);
    expect(held).toEqual([
      { agent_id: 'agent_3', wallet: wallet(3), mint: FOREIGN },
      { agent_id: 'agent_2', wallet: wallet(2), mint: MINT_A },
    ]);
  });

  it('keeps the chain’s market figures outside the read models: a rebuild neither drops nor needs them', async () => {
    const markets = await new MarketStore(database.db).init();
    const state = (price: number): MarketState => ({
      mint: MINT_A,
      venue: 'pump',
      tokenProgram: 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
      decimals: 6,
      supply: 1e9,
      bondingCurve: `curve-of-${MINT_A}`,
      creator: wallet(1),
      curve: { virtualTokenReserves: 1e9, virtualSolReserves: 30 * price, realTokenReserves: 7e8, realSolReserves: 1 },
      complete: false,
      mayhem: false,
      pool: null,
      priceSol: price,
      marketCapSol: price * 1e9,
      progress: 0.1,
    });
    await markets.save([state(2)], { slot: 10, ledgerSeq: 5, at: 1000, requested: true });
    // A reading that includes less of the ledger never replaces one that includes more, whatever its slot.
    await markets.save([state(1)], { slot: 20, ledgerSeq: 4, at: 2000 });
    expect(await markets.find(MINT_A)).toMatchObject({ price_sol: 2, updated_slot: 10, ledger_seq: 5, requested_at: 1000 });
    await markets.save([state(3)], { slot: 30, ledgerSeq: 5, at: 3000 });
    expect(await markets.find(MINT_A)).toMatchObject({
      venue: 'pump',
      price_sol: 3,
      market_cap_sol: 3e9,
      progress: 0.1,
      curve: { virtual_token_reserves: 1e9, virtual_sol_reserves: 90, real_token_reserves: 7e8, real_sol_reserves: 1 },
      pool: null,
      updated_at: 3000,
      updated_slot: 30,
      ledger_seq: 5,
      requested_at: 1000,
    });
    await markets.touch([MINT_A], 100_000);
    expect(await markets.requestedSince(99_000)).toEqual([MINT_A]);
    // One process takes each period's pass.
    expect(await markets.claimPeriodicPass(5000, 200_000)).toBe(true);
    expect(await markets.claimPeriodicPass(5000, 201_000)).toBe(false);
    expect(await markets.claimPeriodicPass(5000, 205_000)).toBe(true);

    const before = await dump(database, 'rm');
    await rebuildReadModels({ database, store, projections, schema: 'rm' });
    expect(await dump(database, 'rm')).toEqual(before);
    expect(await new MarketStore(database.db).init().then((s) => s.find(MINT_A))).toMatchObject({ price_sol: 3, ledger_seq: 5 });
  });
});
