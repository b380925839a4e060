import { execAll, type Migration } from '@svc/readmodel';

/** The outbox's table, in the order its migrations shipped. */
export const chainOutboxMigrations: Migration[] = [
  {
    name: 'chain_outbox_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.chain_outbox (
           id text primary key,
           attempt_id text not null,
           agent_id text not null,
           action text not null,
           idempotency_key text,
           hold_key text,
           state text not null check (state in ('reserved', 'unsigned', 'sent', 'done', 'failed', 'rejected')),
           signature text unique,
           message_hash text,
           transaction text,
           reference text,
           min_slot bigint,
           blockhash text,
           last_valid_block_height bigint,
           record jsonb not null,
           summary jsonb not null,
           receipt jsonb,
           error jsonb,
           lease_until timestamptz not null,
           created_at timestamptz not null default now(),
           updated_at timestamptz not null default now())`,
        `create unique index chain_outbox_idempotency on ${schema}.chain_outbox (agent_id, idempotency_key) where idempotency_key is not null`,
        // A failed action frees what it held (a bounty's one payment); every other state keeps holding it.
        `create unique index chain_outbox_hold on ${schema}.chain_outbox (hold_key) where hold_key is not null and state <> 'failed'`,
        `create index chain_outbox_message on ${schema}.chain_outbox (message_hash) where message_hash is not null`,
        `create index chain_outbox_due on ${schema}.chain_outbox (lease_until) where state in ('reserved', 'unsigned', 'sent')`,
      ]),
  },
  {
    // The bounty-only award outbox is retired: its rows (a payment may be sent but unrecorded) carry on here.
    name: 'chain_outbox_002_award_outbox',
    up: (db, schema) =>
      execAll(db, [
        `do $$ begin
           if to_regclass('${schema}.award_outbox') is not null then
             insert into ${schema}.chain_outbox (id, attempt_id, agent_id, action, hold_key, state, signature, transaction, reference, min_slot,
                 blockhash, last_valid_block_height, record, summary, error, lease_until, created_at, updated_at)
               select 'act_award_' || bounty_id, attempt_id, poster_id, 'award_payment', 'bounty:' || bounty_id, state, signature, transaction,
                 reference, min_slot, blockhash, last_valid_block_height,
                 jsonb_build_object('type', 'AwardBounty', 'agentId', poster_id, 'data', jsonb_build_object('bounty_id', bounty_id, 'submission_id', submission_id)),
                 jsonb_build_object('bounty_id', bounty_id, 'submission_id', submission_id),
                 case when error is null then null else jsonb_build_object('code', 'invalid_request', 'message', error) end,
                 lease_until, created_at, updated_at
               from ${schema}.award_outbox;
             drop table ${schema}.award_outbox;
           end if;
         end $$`,
      ]),
  },
  {
    // The live process working on the row (see Liveness): once it is gone, the row is due at once.
    name: 'chain_outbox_003_holder',
    up: (db, schema) => execAll(db, [`alter table ${schema}.chain_outbox add column holder integer`]),
  },
];
