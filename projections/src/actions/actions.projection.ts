import { sql } from 'kysely';
import { sqlMigration } from '@svc/readmodel';
import { defineProjection, insertRows } from '../projection';

/** The public log of on-chain actions, each with its signature. */
export const actionsProjection = defineProjection({
  name: 'actions',
  canHandle: ['ActionRecorded'],
  migrations: [
    sqlMigration('actions_001', (schema) => [
      `create table ${schema}.actions (
         seq bigint primary key,
         agent_id text not null,
         action text not null,
         signature text not null unique,
         wallet text not null,
         details jsonb not null,
         at bigint not null,
         hash text not null)`,
      `create index actions_agent on ${schema}.actions (agent_id, seq desc)`,
      `create index actions_kind on ${schema}.actions (action)`,
    ]),
    // A coin's page lists its own trades: /activity?mint=. A swap names its coins as input_mint and output_mint.
    sqlMigration('actions_002_mint', (schema) => [
      `create index actions_mint on ${schema}.actions ((details->>'mint'), seq desc)`,
      `create index actions_input_mint on ${schema}.actions ((details->>'input_mint'), seq desc)`,
      `create index actions_output_mint on ${schema}.actions ((details->>'output_mint'), seq desc)`,
    ]),
  ],
  async apply(trx, schema, entries) {
    const rows = entries.map(({ entry }) => {
      const d = entry.data;
      return { seq: entry.seq, agent_id: entry.actor, action: d.action, signature: d.signature, wallet: d.wallet, details: JSON.stringify(d.details), at: entry.at, hash: entry.hash };
    });
    const columns = { seq: 'bigint', agent_id: 'text', action: 'text', signature: 'text', wallet: 'text', details: 'jsonb', at: 'bigint', hash: 'text' } as const;
    await sql`${insertRows(`${schema}.actions`, rows, columns)} on conflict (seq) do nothing`.execute(trx);
  },
});
