import { sql } from 'kysely';
import { ledgerModel, type ActionName, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LEDGER_STREAM, LedgerWriter, PostgresEventStore } from '@svc/ledger';
import { TreasuryCycleStore } from '@svc/marketdata';
import { Projector, projections, treasury } from '@svc/projections';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { executeInOrder } from '../support/ledgerModel';

const TREASURY = 'TreasuryWa11et';
const MINT = 'ServiceMint1111111111111111111111111111111';

const action = (agentId: string, wallet: string, name: ActionName, details: Record<string, unknown>, signature: string): LedgerCommand => ({
  type: 'RecordAction',
  agentId,
  data: { action: name, signature, wallet, details },
});
const observed = (sol_change_lamports: number, fee_lamports: number, extra: Record<string, unknown> = {}) => ({ observed: { fee_lamports, sol_change_lamports, rent_lamports: 0, ...extra } });

async function dump(database: SqlDatabase, schema: string): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of ['treasury_totals', 'treasury_actions']) out[table] = (await sql.raw(`select * from ${schema}.${table} order by 1`).execute(database.db)).rows;
  return out;
}

describe('the treasury read model', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: PostgresEventStore;

  beforeAll(async () => {
    db = await freshDatabase('treasury_rm');
    database = await openDatabase({ url: db.url, dataDir: tempDir('treasury-rm') });
    store = await new PostgresEventStore(database).init();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    const commands: LedgerCommand[] = [
      { type: 'RegisterCitizen', data: { agent_id: 'agent_1', handle: 'alice', model: 'm', bio: '', wallet: 'W1', custody: 'service' } },
      // A citizen's burn before the treasury exists, and after: never the treasury's.
      action('agent_1', 'W1', 'burn', { mint: MINT, burned_raw: '5' }, 'SIG_alice_burn'),
      { type: 'RegisterTreasury', data: { agent_id: 'agent_T', wallet: TREASURY } },
      action('agent_T', TREASURY, 'fee_distribution', { mint: 'COIN', ...observed(295_000, 5_000) }, 'SIG_dist'),
      action('agent_T', TREASURY, 'buyback', { mint: MINT, decimals: 6, ...observed(-2_000_105_000, 105_000, { token_change_raw: '70000000000000', rent_lamports: 0 }) }, 'SIG_buy'),
      action('agent_1', 'W1', 'burn', { mint: MINT, burned_raw: '7' }, 'SIG_alice_burn_2'),
      action('agent_T', TREASURY, 'burn', { mint: MINT, decimals: 6, burned_raw: '70000000000000' }, 'SIG_burn'),
    ];
    await executeInOrder(writer, commands);
  });
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await db?.drop();
  });

  it('sums the treasury’s own actions from their observed balances, and lists them', async () => {
    const projector = await new Projector({ database, store, projections, schema: 'rm' }).init();
    await projector.catchUp();
    expect(await treasury.totals(database.db, 'rm')).toEqual({
      agent_id: 'agent_T',
      wallet: TREASURY,
      seq: 6,
      fees_received_lamports: 300_000n,
      sol_spent_lamports: 2_000_000_000n,
      tokens_bought_raw: 70_000_000_000_000n,
      tokens_burned_raw: 70_000_000_000_000n,
      token_decimals: 6,
      distributions: 1,
      buybacks: 1,
      burns: 1,
    });
    expect((await treasury.recentActions(database.db, 'rm', 10)).map((a) => [a.action, a.signature])).toEqual([
      ['burn', 'SIG_burn'],
      ['buyback', 'SIG_buy'],
      ['fee_distribution', 'SIG_dist'],
    ]);
  });

  it('applies the same batch twice with the same rows as once', async () => {
    const batch = await store.readForward(LEDGER_STREAM, 0, 100);
    const once = await dump(database, 'rm');
    await sql`update rm.checkpoints set seq = -1`.execute(database.db);
    await new Projector({ database, store, projections, schema: 'rm' }).init().then((p) => p.applyBatch(batch));
    expect(await dump(database, 'rm')).toEqual(once);
  });

  it('runs one cycle at a time, whoever asks, and remembers the last', async () => {
    const cycles = await new TreasuryCycleStore(database.db).init();
    const claims = await Promise.all(['a', 'b', 'c'].map((holder) => cycles.claim(holder, 60_000)));
    expect(claims.filter((n) => n !== undefined)).toEqual([1]);
    const holder = ['a', 'b', 'c'][claims.findIndex((n) => n !== undefined)]!;
    expect(await cycles.renew('someone else', 1, 60_000)).toBe(false);
    expect(await cycles.renew(holder, 1, 60_000)).toBe(true);
    const last = { cycle: 1, at: 1, distributed_sol: 0, sol_spent: 0, tokens_bought: 0, tokens_burned: 0, signatures: [], skipped_reason: 'why' };
    await cycles.finish(holder, 1, last);
    expect(await cycles.lastCycle()).toEqual(last);
    // Scheduled: one is due now (none ran on a schedule yet); the next is not due until the period has passed.
    expect(await cycles.claim('d', 60_000, 3_600_000)).toBe(2);
    await cycles.finish('d', 2, { ...last, cycle: 2 });
    expect(await cycles.claim('e', 60_000, 3_600_000)).toBeUndefined();
    expect(await cycles.claim('e', 60_000)).toBe(3);
  });
});
