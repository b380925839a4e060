import { sql, type Kysely } from 'kysely';
import { marketStatus, type MarketState, type MarketStatus, type VenueName } from '@svc/chain';
import { execAll, type Migration } from '@svc/readmodel';
import { MarketDataStore } from './store';

/**
 * Where the chain's market figures are kept: a schema of their own, beside the read models rather than in
 * them. They are a cache of the chain, not a projection of the ledger, so a rebuild (which builds the read
 * models in a new schema and swaps it in) has nothing to replay them from; here they survive it, and every
 * reader keeps its prices through the swap. The refresher and any reader that finds a figure missing or stale
 * rewrite it from the chain, so the schema may also be dropped at any time.
 */
export const MARKET_SCHEMA = 'chain_cache';
const PERIODIC_CLAIM = 'token_markets';

const migrations: Migration[] = [
  {
    name: 'token_markets_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.token_markets (
           mint text primary key,
           venue text not null,
           token_program text not null,
           decimals integer not null,
           supply double precision not null,
           bonding_curve text,
           creator text,
           complete boolean not null,
           mayhem boolean not null,
           virtual_token_reserves double precision,
           virtual_sol_reserves double precision,
           real_token_reserves double precision,
           real_sol_reserves double precision,
           pool text,
           pool_base_reserve double precision,
           pool_quote_reserve double precision,
           pool_virtual_quote_reserve double precision,
           price_sol double precision,
           market_cap_sol double precision,
           progress double precision,
           updated_at bigint not null,
           updated_slot bigint not null,
           ledger_seq bigint not null,
           requested_at bigint not null default 0)`,
        `create index token_markets_requested on ${schema}.token_markets (requested_at)`,
        // Which process runs the next periodic pass: one claim row, taken with a compare-and-set update.
        `create table ${schema}.refresh_claims (name text primary key, due_at bigint not null)`,
        `insert into ${schema}.refresh_claims (name, due_at) values ('${PERIODIC_CLAIM}', 0)`,
      ]),
  },
];

/** A mint's market as last read from the chain, and when. */
export interface MarketView {
  mint: string;
  venue: VenueName;
  status: MarketStatus;
  token_program: string;
  decimals: number;
  supply: number;
  bonding_curve: string | null;
  creator: string | null;
  complete: boolean;
  mayhem: boolean;
  curve: { virtual_token_reserves: number; virtual_sol_reserves: number; real_token_reserves: number; real_sol_reserves: number } | null;
  pool: { address: string; base_reserve: number; quote_reserve: number; virtual_quote_reserve: number } | null;
  price_sol: number | null;
  market_cap_sol: number | null;
  progress: number | null;
  /** When it was read (ms), at which slot, and the ledger position whose actions the reading includes. */
  updated_at: number;
  updated_slot: number;
  ledger_seq: number;
  requested_at: number;
}

/** How a reading was taken: the slot it answered at, the ledger position it includes, the time. */
export interface ReadingStamp {
  slot: number;
  ledgerSeq: number;
  at: number;
  /** Someone asked about these mints: keep them fresh for a while. */
  requested?: boolean;
}

const numberOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function toView(row: any): MarketView {
  return {
    mint: row.mint,
    venue: row.venue,
    status: marketStatus(row.venue, row.complete, Boolean(row.bonding_curve)),
    token_program: row.token_program,
    decimals: Number(row.decimals),
    supply: Number(row.supply),
    bonding_curve: row.bonding_curve ?? null,
    creator: row.creator ?? null,
    complete: row.complete,
    mayhem: row.mayhem,
    curve:
      row.virtual_token_reserves === null
        ? null
        : {
            virtual_token_reserves: Number(row.virtual_token_reserves),
            virtual_sol_reserves: Number(row.virtual_sol_reserves),
            real_token_reserves: Number(row.real_token_reserves),
            real_sol_reserves: Number(row.real_sol_reserves),
          },
    pool:
      row.pool === null
        ? null
        : {
            address: row.pool,
            base_reserve: Number(row.pool_base_reserve),
            quote_reserve: Number(row.pool_quote_reserve),
            virtual_quote_reserve: Number(row.pool_virtual_quote_reserve),
          },
    price_sol: numberOrNull(row.price_sol),
    market_cap_sol: numberOrNull(row.market_cap_sol),
    progress: numberOrNull(row.progress),
    updated_at: Number(row.updated_at),
    updated_slot: Number(row.updated_slot),
    ledger_seq: Number(row.ledger_seq),
    requested_at: Number(row.requested_at),
  };
}

function toRow(state: MarketState, stamp: ReadingStamp) {
  return {
    mint: state.mint,
    venue: state.venue,
    token_program: state.tokenProgram,
    decimals: state.decimals,
    supply: state.supply,
    bonding_curve: state.bondingCurve,
    creator: state.creator,
    complete: state.complete,
    mayhem: state.mayhem,
    virtual_token_reserves: state.curve?.virtualTokenReserves ?? null,
    virtual_sol_reserves: state.curve?.virtualSolReserves ?? null,
    real_token_reserves: state.curve?.realTokenReserves ?? null,
    real_sol_reserves: state.curve?.realSolReserves ?? null,
    pool: state.pool?.address ?? null,
    pool_base_reserve: state.pool?.baseReserve ?? null,
    pool_quote_reserve: state.pool?.quoteReserve ?? null,
    pool_virtual_quote_reserve: state.pool?.virtualQuoteReserve ?? null,
    price_sol: state.priceSol,
    market_cap_sol: state.marketCapSol,
    progress: state.progress,
    updated_at: stamp.at,
    updated_slot: stamp.slot,
    ledger_seq: stamp.ledgerSeq,
    requested_at: stamp.requested ? stamp.at : 0,
  };
}

/** A reading as the table will hold it, for a reader that wrote it and need not read it back. */
export function marketView(state: MarketState, stamp: ReadingStamp): MarketView {
  return toView(toRow(state, stamp));
}

const REWRITTEN = [
  'venue', 'token_program', 'decimals', 'supply', 'bonding_curve', 'creator', 'complete', 'mayhem', 'virtual_token_reserves', 'virtual_sol_reserves',
  'real_token_reserves', 'real_sol_reserves', 'pool', 'pool_base_reserve', 'pool_quote_reserve', 'pool_virtual_quote_reserve', 'price_sol',
  'market_cap_sol', 'progress', 'updated_at', 'updated_slot', 'ledger_seq',
] as const;

/** The market figures' table: read by the API, written by the refresher and by readers that find a figure stale. */
export class MarketStore extends MarketDataStore {
  constructor(db: Kysely<any>, schema = MARKET_SCHEMA) {
    super(db, schema, migrations);
  }

  /**
   * Keeps each reading unless the row holds a later one: one that includes more of the ledger, or the same
   * ledger at a later slot. Two writers racing (the refresher and a reader) cannot put an older figure back.
   */
  async save(states: MarketState[], stamp: ReadingStamp): Promise<void> {
    if (states.length === 0) return;
    const table = `${this.schema}.token_markets`;
    for (let i = 0; i < states.length; i += 500) {
      await this.db
        .insertInto(table)
        .values(states.slice(i, i + 500).map((state) => toRow(state, stamp)))
        .onConflict((oc) =>
          oc
            .column('mint')
            .doUpdateSet((eb) => ({
              ...Object.fromEntries(REWRITTEN.map((column) => [column, eb.ref(`excluded.${column}`)])),
              requested_at: sql`greatest(${sql.ref(`${table}.requested_at`)}, excluded.requested_at)`,
            }))
            .where(
              sql<boolean>`excluded.ledger_seq > ${sql.ref(`${table}.ledger_seq`)} or (excluded.ledger_seq = ${sql.ref(`${table}.ledger_seq`)} and excluded.updated_slot >= ${sql.ref(`${table}.updated_slot`)})`,
            ),
        )
        .execute();
    }
  }

  async find(mint: string): Promise<MarketView | undefined> {
    const row = await this.db.selectFrom(`${this.schema}.token_markets`).selectAll().where('mint', '=', mint).executeTakeFirst();
    return row ? toView(row) : undefined;
  }

  async findMany(mints: string[]): Promise<Map<string, MarketView>> {
    const found = new Map<string, MarketView>();
    for (let i = 0; i < mints.length; i += 1000) {
      const rows = await this.db.selectFrom(`${this.schema}.token_markets`).selectAll().where('mint', 'in', mints.slice(i, i + 1000)).execute();
      for (const row of rows) found.set(row.mint, toView(row));
    }
    return found;
  }

  /** Marks mints as asked about, at most once a minute each, so the refresher keeps them fresh. */
  async touch(mints: string[], now = Date.now()): Promise<void> {
    if (mints.length === 0) return;
    await this.db
      .updateTable(`${this.schema}.token_markets`)
      .set({ requested_at: now })
      .where('mint', 'in', mints)
      .where('requested_at', '<', now - 60_000)
      .execute();
  }

  /** Mints asked about since `since` (ms). */
  async requestedSince(since: number): Promise<string[]> {
    const rows = await this.db.selectFrom(`${this.schema}.token_markets`).select('mint').where('requested_at', '>=', since).execute();
    return rows.map((r) => r.mint as string);
  }

  /**
   * Claims the next periodic pass for this process when it is due, moving it `everyMs` on: one pass per period
   * across any number of worker processes.
   */
  async claimPeriodicPass(everyMs: number, now = Date.now()): Promise<boolean> {
    const moved = await this.db
      .updateTable(`${this.schema}.refresh_claims`)
      .set({ due_at: now + everyMs })
      .where('name', '=', PERIODIC_CLAIM)
      .where('due_at', '<=', now)
      .executeTakeFirst();
    return Number(moved.numUpdatedRows) === 1;
  }
}
