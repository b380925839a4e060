import { sql } from 'kysely';
import { sqlMigration } from '@svc/readmodel';
import { defineProjection, insertRows } from '../projection';
import { actionDetails, mintsOf } from './tokens.projection';

/**
 * Which coins each citizen's on-chain actions touched, and the ledger position of the last one: the holdings
 * the leaderboard prices (one token account per pair, not a scan of every wallet), and, per coin, how far the
 * ledger has moved it, which tells whether a cached reading of its market predates a trade.
 */
export const agentMintsProjection = defineProjection({
  name: 'agent_mints',
  canHandle: ['ActionRecorded'],
  migrations: [
    sqlMigration('agent_mints_001', (schema) => [
      `create table ${schema}.agent_mints (
         agent_id text not null,
         mint text not null,
         last_seq bigint not null,
         primary key (agent_id, mint))`,
      `create index agent_mints_by_mint on ${schema}.agent_mints (mint, last_seq desc)`,
      `create index agent_mints_recent on ${schema}.agent_mints (last_seq desc)`,
    ]),
  ],
  async apply(trx, schema, entries) {
    // One row per pair in a statement: PostgreSQL refuses to upsert a row twice in one command.
    const pairs = new Map<string, { agent_id: string; mint: string; last_seq: number }>();
    for (const { entry } of entries) {
      const details = actionDetails(entry);
      const agents = [entry.actor];
      const recipient = entry.data.action === 'transfer' ? details.to_agent_id : undefined;
      if (typeof recipient === 'string' && recipient.length > 0) agents.push(recipient);
      for (const mint of mintsOf(details)) {
        for (const agent of agents) pairs.set(`${agent}|${mint}`, { agent_id: agent, mint, last_seq: entry.seq });
      }
    }
    if (pairs.size === 0) return;
    await sql`${insertRows(`${schema}.agent_mints`, [...pairs.values()], { agent_id: 'text', mint: 'text', last_seq: 'bigint' })}
      on conflict (agent_id, mint) do update set last_seq = excluded.last_seq
      where ${sql.raw(schema)}.agent_mints.last_seq < excluded.last_seq`.execute(trx);
  },
});
