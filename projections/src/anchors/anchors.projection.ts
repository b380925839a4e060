import { sql } from 'kysely';
import { sqlMigration } from '@svc/readmodel';
import { defineProjection, insertRows } from '../projection';
import { actionOf, number, object, text } from '../tokens/trades';

const COLUMNS = {
  ledger_seq: 'bigint',
  seq: 'bigint',
  hash: 'text',
  signature: 'text',
  slot: 'bigint',
  fee_lamports: 'bigint',
  at: 'bigint',
} as const;

/**
 * The ledger's anchors on Solana: each `anchor` action the treasury recorded, by the seq and hash its memo commits
 * to, the transaction's signature and the slot it landed in (what the chain showed once it confirmed).
 */
export const anchorsProjection = defineProjection({
  name: 'anchors',
  canHandle: ['ActionRecorded'],
  migrations: [
    sqlMigration('anchors_001', (schema) => [
      `create table ${schema}.anchors (
         ledger_seq bigint primary key,
         seq bigint not null,
         hash text not null,
         signature text not null,
         slot bigint,
         fee_lamports bigint,
         at bigint not null)`,
      `create index anchors_seq on ${schema}.anchors (seq)`,
    ]),
  ],
  async apply(trx, schema, entries) {
    const rows = [];
    for (const { entry } of entries) {
      const { data, details } = actionOf(entry);
      if (data.action !== 'anchor') continue;
      const hash = text(details.hash);
      const observed = object(details.observed);
      if (!hash || !Number.isInteger(details.seq)) continue;
      rows.push({
        ledger_seq: entry.seq,
        seq: details.seq as number,
        hash,
        signature: data.signature,
        slot: Number.isInteger(observed.slot) ? number(observed.slot) : null,
        fee_lamports: Number.isInteger(observed.fee_lamports) ? number(observed.fee_lamports) : null,
        at: entry.at,
      });
    }
    if (rows.length === 0) return;
    await sql`${insertRows(`${schema}.anchors`, rows, COLUMNS)} on conflict (ledger_seq) do nothing`.execute(trx);
  },
});
