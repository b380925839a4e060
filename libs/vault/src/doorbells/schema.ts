import { sql, type RawBuilder } from 'kysely';
import { execAll, quoteIdent, type Migration } from '@svc/readmodel';

/** The fan-out's one position row: every worker process shares one place in the ledger. */
export const FANOUT_POSITION = 'main';

/**
 * In order. A migration never changes once shipped, so a prefix of this list is the schema an older
 * release left behind.
 */
export const doorbellMigrations: readonly Migration[] = [
  {
    name: 'doorbells_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.doorbells (
           id text primary key,
           agent_id text not null,
           url text not null,
           kinds text not null,
           secret_sealed text,
           muted boolean not null default false,
           muted_at bigint,
           failures integer not null default 0,
           after_seq bigint not null,
           created_at bigint not null,
           updated_at bigint not null,
           unique (agent_id, url))`,
        `create table ${schema}.doorbell_deliveries (
           id text primary key,
           doorbell_id text not null references ${schema}.doorbells (id) on delete cascade,
           agent_id text not null,
           seq bigint not null,
           kind text not null,
           status text not null check (status in ('pending', 'delivered', 'failed', 'skipped')),
           attempts integer not null default 0,
           tries integer not null default 0,
           due_at timestamptz not null default now(),
           claim_id text,
           last_http_status integer,
           last_error text,
           created_at bigint not null,
           updated_at bigint not null,
           delivered_at bigint,
           unique (doorbell_id, seq))`,
        `create index doorbell_deliveries_due on ${schema}.doorbell_deliveries (due_at) where status = 'pending'`,
        `create index doorbell_deliveries_owner on ${schema}.doorbell_deliveries (agent_id, seq desc, id desc)`,
        `create table ${schema}.doorbell_attempts (
           delivery_id text not null references ${schema}.doorbell_deliveries (id) on delete cascade,
           n integer not null,
           started_at bigint not null,
           duration_ms integer not null,
           http_status integer,
           error text,
           ok boolean not null,
           primary key (delivery_id, n))`,
        `create table ${schema}.doorbell_fanout (name text primary key, seq bigint not null)`,
        `insert into ${schema}.doorbell_fanout (name, seq) values ('${FANOUT_POSITION}', -1)`,
      ]),
  },
  {
    // A doorbell's own queue: one send in flight (claim_id, leased until next_send_at), and after a
    // failure no send before next_send_at. Fan-out writes its rows in SQL, so ids are made there too.
    name: 'doorbells_002',
    up: (db, schema) =>
      execAll(db, [
        `alter table ${schema}.doorbells add column next_send_at timestamptz not null default now(), add column claim_id text`,
        `create index doorbell_deliveries_queue on ${schema}.doorbell_deliveries (doorbell_id, due_at) where status = 'pending'`,
        `drop index if exists ${schema}.doorbell_deliveries_due`,
        `create function ${schema}.doorbell_delivery_id() returns text language sql volatile as $fn$
           select 'dlv_' || string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ',
                    1 + case when i < 10 then ((ms >> (45 - 5 * i)) & 31)::int else floor(random() * 32)::int end, 1), '' order by i)
             from (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) clock, generate_series(0, 25) as i
         $fn$`,
      ]),
  },
  {
    // URLs often carry a token in their query: sealed like the secret from here on, and found by a keyed
    // hash (a bare hash of a guessable URL would confirm a guess). Rows written before are sealed at start
    // by the registry (DoorbellRegistry.sealPlaintextUrls), which holds the key, and which then drops `url`.
    name: 'doorbells_003',
    up: (db, schema) =>
      execAll(db, [
        `alter table ${schema}.doorbells add column url_sealed text, add column url_hash text, alter column url drop not null`,
        `alter table ${schema}.doorbells drop constraint doorbells_agent_id_url_key`,
        `create unique index doorbells_agent_url_hash on ${schema}.doorbells (agent_id, url_hash)`,
      ]),
  },
  {
    // Signatures over a timestamp and the body (`t=<ms>,v1=<hex>`), so a captured delivery cannot be replayed later.
    // Doorbells registered before keep the body-only header their receivers check until their owner registers again.
    name: 'doorbells_004',
    up: (db, schema) =>
      execAll(db, [
        `alter table ${schema}.doorbells add column signing text not null default '${LEGACY_SIGNING}'`,
        `alter table ${schema}.doorbells alter column signing set default '${TIMESTAMPED_SIGNING}'`,
      ]),
  },
];

/** How a doorbell's deliveries are signed: `sha256=<hex of the body>` (before timestamps), or `t=<ms>,v1=<hex of "t.body">`. */
export type DoorbellSigning = 'body' | 'timestamped';
export const LEGACY_SIGNING: DoorbellSigning = 'body';
export const TIMESTAMPED_SIGNING: DoorbellSigning = 'timestamped';

/** A delivery's state, as the `doorbell_deliveries.status` check constraint allows it. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'skipped';

type DoorbellTable = 'doorbells' | 'doorbell_deliveries' | 'doorbell_attempts' | 'doorbell_fanout';

/** The doorbell tables of one schema, named for kysely's builder and for raw SQL. */
export class DoorbellTables {
  constructor(readonly schema: string) {}

  /** `schema.table`, for kysely's builder. */
  name(table: DoorbellTable): string {
    return `${this.schema}.${table}`;
  }

  /** The quoted name, for raw SQL. */
  ref(table: DoorbellTable): RawBuilder<unknown> {
    return sql.raw(`${quoteIdent(this.schema)}.${table}`);
  }

  /** The SQL function that makes a delivery id (`dlv_` + a ULID), for rows written by a statement. */
  deliveryId(): RawBuilder<string> {
    return sql.raw(`${quoteIdent(this.schema)}.doorbell_delivery_id()`);
  }
}
