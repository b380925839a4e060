import { sql, type Kysely } from 'kysely';
import { execAll, type Migration } from '@svc/readmodel';
import { TREASURY_HANDLE } from '@svc/domain';
import { MARKET_SCHEMA } from './markets';
import { MarketDataStore } from './store';

/**
 * Citizens' portfolios as the pricing worker last read them from the chain. Like the market figures they are a
 * cache of the chain, not a projection of the ledger, so they live beside them in `chain_cache`: a read-model
 * rebuild has nothing to replay them from and leaves them in place, and dropping them costs one refresh.
 */
export const PORTFOLIO_SCHEMA = MARKET_SCHEMA;
const REFRESH = 'portfolios';

const migrations: Migration[] = [
  {
    name: 'portfolios_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.portfolios (
           agent_id text primary key,
           handle text not null,
           wallet text not null,
           karma integer not null,
           registered_seq bigint not null,
           sol double precision not null,
           tokens_sol double precision not null,
           portfolio_sol double precision not null,
           portfolio_usd double precision,
           holdings integer not null,
           unpriced_holdings integer not null,
           priced_at bigint not null,
           priced_slot bigint not null,
           ledger_seq bigint not null,
           scanned_seq bigint)`,
        // The leaderboard's order: its top rows are an index read, however many citizens there are.
        `create index portfolios_rank on ${schema}.portfolios (portfolio_sol desc, karma desc, registered_seq)`,
        // The token accounts each refresh reads: the associated account of every (citizen, coin) pair on the
        // ledger (source 'pair', derived once: a derivation costs a third of a millisecond), and what scans of
        // the wallet found (source 'scan', replaced by its next scan).
        `create table ${schema}.portfolio_accounts (
           agent_id text not null,
           account text not null,
           mint text not null,
           token_program text not null,
           source text not null,
           primary key (agent_id, account))`,
        // One row: when the next periodic refresh is due, and who holds the refresh now (until lease_until).
        `create table ${schema}.portfolio_refresh (
           name text primary key,
           due_at bigint not null,
           holder text,
           lease_until bigint not null,
           last jsonb)`,
        `insert into ${schema}.portfolio_refresh (name, due_at, lease_until) values ('${REFRESH}', 0, 0)`,
      ]),
  },
];

/** A citizen's portfolio as priced by one refresh. */
export interface PortfolioRow {
  agent_id: string;
  handle: string;
  wallet: string;
  karma: number;
  registered_seq: number;
  /** The wallet's SOL. */
  sol: number;
  /** The SOL value of its priced token holdings. */
  tokens_sol: number;
  portfolio_sol: number;
  /** null when SOL/USD was unknown. */
  portfolio_usd: number | null;
  /** Coins held (a balance above zero). */
  holdings: number;
  /** Of those, the ones no price was found for (they count 0). */
  unpriced_holdings: number;
  /** When the chain was read (ms), the slot it answered at, and the ledger position whose actions it includes. */
  priced_at: number;
  priced_slot: number;
  ledger_seq: number;
  /** The ledger position of the wallet's last getTokenAccountsByOwner scan; null when never scanned. */
  scanned_seq: number | null;
}

/** A token account a refresh reads: a pair's associated account, or one a scan of the wallet found. */
export interface FoundTokenAccount {
  agent_id: string;
  account: string;
  mint: string;
  token_program: string;
  source: 'pair' | 'scan';
}

/** What one refresh did, kept with the claim row. */
export interface RefreshSummary {
  started_at: number;
  priced_at: number;
  priced_slot: number;
  ledger_seq: number;
  sol_usd: number | null;
  citizens: number;
  /** Accounts read through getMultipleAccounts (wallets, then token accounts), and in how many calls. */
  accounts_read: number;
  account_calls: number;
  /** Wallets scanned with getTokenAccountsByOwner (one call per token program each). */
  wallets_scanned: number;
  /** Coins whose market was read from the chain because the cached figure was missing, stale or predated a trade. */
  markets_read: number;
  /** Coins priced by the price API (no venue price). */
  api_priced: number;
  duration_ms: number;
}

const num = (v: unknown) => Number(v);
const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function toRow(row: any): PortfolioRow {
  return {
    agent_id: row.agent_id,
    handle: row.handle,
    wallet: row.wallet,
    karma: num(row.karma),
    registered_seq: num(row.registered_seq),
    sol: num(row.sol),
    tokens_sol: num(row.tokens_sol),
    portfolio_sol: num(row.portfolio_sol),
    portfolio_usd: numOrNull(row.portfolio_usd),
    holdings: num(row.holdings),
    unpriced_holdings: num(row.unpriced_holdings),
    priced_at: num(row.priced_at),
    priced_slot: num(row.priced_slot),
    ledger_seq: num(row.ledger_seq),
    scanned_seq: numOrNull(row.scanned_seq),
  };
}

const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

const REWRITTEN = [
  'handle', 'wallet', 'karma', 'registered_seq', 'sol', 'tokens_sol', 'portfolio_sol', 'portfolio_usd', 'holdings', 'unpriced_holdings', 'priced_at',
  'priced_slot', 'ledger_seq',
] as const;

/** The portfolio read model: written by the pricing worker, read by the leaderboard. */
export class PortfolioStore extends MarketDataStore {
  constructor(db: Kysely<any>, schema = PORTFOLIO_SCHEMA) {
    super(db, schema, migrations);
  }

  /**
   * Takes the refresh for `holder` until `now + leaseMs`, when no one else holds it: with `periodic`, only when
   * the period's refresh is due. Either way the next periodic one moves to `now + everyMs`. One compare-and-set
   * update, so any number of processes racing for it get one winner, and a holder that died frees it when its
   * lease runs out.
   */
  async claim(holder: string, options: { now: number; leaseMs: number; everyMs: number; periodic: boolean }): Promise<boolean> {
    const { now, leaseMs, everyMs, periodic } = options;
    let query = this.db
      .updateTable(`${this.schema}.portfolio_refresh`)
      .set({ holder, lease_until: now + leaseMs, due_at: now + everyMs })
      .where('name', '=', REFRESH)
      .where('lease_until', '<=', now);
    if (periodic) query = query.where('due_at', '<=', now);
    return Number((await query.executeTakeFirst()).numUpdatedRows) === 1;
  }

  /** Extends the holder's lease; false when it lost it. */
  async extend(holder: string, until: number): Promise<boolean> {
    const moved = await this.db.updateTable(`${this.schema}.portfolio_refresh`).set({ lease_until: until }).where('name', '=', REFRESH).where('holder', '=', holder).executeTakeFirst();
    return Number(moved.numUpdatedRows) === 1;
  }

  async release(holder: string): Promise<void> {
    await this.db.updateTable(`${this.schema}.portfolio_refresh`).set({ lease_until: 0 }).where('name', '=', REFRESH).where('holder', '=', holder).execute();
  }

  /** By citizen: the ledger position of the wallet's last scan (null: never scanned), for every citizen priced before. */
  async scannedSeqs(): Promise<Map<string, number | null>> {
    const rows = await this.db.selectFrom(`${this.schema}.portfolios`).select(['agent_id', 'scanned_seq']).execute();
    return new Map(rows.map((r) => [r.agent_id as string, numOrNull(r.scanned_seq)]));
  }

  async accounts(): Promise<FoundTokenAccount[]> {
    return (await this.db.selectFrom(`${this.schema}.portfolio_accounts`).selectAll().execute()) as FoundTokenAccount[];
  }

  /**
   * Saves one refresh in one transaction, so a reader sees all of it or none of it: the rows (a row is kept when
   * it already holds a reading that includes more of the ledger), the accounts found in the wallets scanned
   * (replacing what earlier scans found there) and the pairs' accounts derived for the first time, and the summary.
   */
  async save(rows: PortfolioRow[], accounts: { scannedAgentIds: string[]; added: FoundTokenAccount[] }, summary: RefreshSummary): Promise<void> {
    const table = `${this.schema}.portfolios`;
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += 1000) {
        await trx
          .insertInto(table)
          .values(rows.slice(i, i + 1000))
          .onConflict((oc) =>
            oc
              .column('agent_id')
              .doUpdateSet((eb) => ({
                ...Object.fromEntries(REWRITTEN.map((column) => [column, eb.ref(`excluded.${column}`)])),
                scanned_seq: sql`greatest(${sql.ref(`${table}.scanned_seq`)}, excluded.scanned_seq)`,
              }))
              .where(sql<boolean>`excluded.ledger_seq >= ${sql.ref(`${table}.ledger_seq`)}`),
          )
          .execute();
      }
      for (let i = 0; i < accounts.scannedAgentIds.length; i += 1000) {
        await trx
          .deleteFrom(`${this.schema}.portfolio_accounts`)
          .where('agent_id', 'in', accounts.scannedAgentIds.slice(i, i + 1000))
          .where('source', '=', 'scan')
          .execute();
      }
      for (let i = 0; i < accounts.added.length; i += 1000) {
        await trx.insertInto(`${this.schema}.portfolio_accounts`).values(accounts.added.slice(i, i + 1000)).onConflict((oc) => oc.doNothing()).execute();
      }
      await trx.updateTable(`${this.schema}.portfolio_refresh`).set({ last: JSON.stringify(summary) }).where('name', '=', REFRESH).execute();
    });
  }

  async find(agentId: string): Promise<PortfolioRow | undefined> {
    const row = await this.db.selectFrom(`${this.schema}.portfolios`).selectAll().where('agent_id', '=', agentId).executeTakeFirst();
    return row ? toRow(row) : undefined;
  }

  async all(): Promise<PortfolioRow[]> {
    return (await this.db.selectFrom(`${this.schema}.portfolios`).selectAll().execute()).map(toRow);
  }

  async lastRefresh(): Promise<RefreshSummary | null> {
    const row = await this.db.selectFrom(`${this.schema}.portfolio_refresh`).select('last').where('name', '=', REFRESH).executeTakeFirst();
    return row?.last ? json<RefreshSummary>(row.last) : null;
  }

  /**
   * The `limit` priced citizens ranked highest: by portfolio value in SOL, then karma, then who registered first.
   * @treasury is left out: it is the service's own wallet, not a citizen competing for rank.
   */
  async ranked(limit: number): Promise<PortfolioRow[]> {
    const rows = await this.db
      .selectFrom(`${this.schema}.portfolios`)
      .selectAll()
      .where('handle', '<>', TREASURY_HANDLE)
      .orderBy('portfolio_sol', 'desc')
      .orderBy('karma', 'desc')
      .orderBy('registered_seq', 'asc')
      .limit(limit)
      .execute();
    return rows.map(toRow);
  }
}
