import { sql } from 'kysely';
import { kindOf } from '@svc/domain';
import { sqlMigration } from '@svc/readmodel';
import { insertNew, type Projection } from '../projection';

/** Every ledger entry with its hash, for /changes, /record and anyone re-verifying the chain. */
export const entriesProjection: Projection = {
  name: 'entries',
  canHandle: '*',
  migrations: [
    sqlMigration('entries_001', (schema) => [
      `create table ${schema}.entries (
         seq bigint primary key,
         type text not null,
         kind text not null,
         at bigint not null,
         actor text not null,
         hash text not null,
         body text not null)`,
      `create index entries_at on ${schema}.entries (at, seq)`,
      `create index entries_actor on ${schema}.entries (actor, seq)`,
    ]),
  ],
  async apply(trx, schema, entries, options) {
    const rows = entries.map(({ entry, bytes }) => ({
      seq: entry.seq,
      type: entry.type,
      kind: kindOf(entry.type, entry.data),
      at: entry.at,
      actor: entry.actor,
      hash: entry.hash,
      // The stored canonical bytes, so what /changes serves re-hashes exactly.
      body: bytes,
    }));
    const columns = { seq: 'bigint', type: 'text', kind: 'text', at: 'bigint', actor: 'text', hash: 'text', body: 'text' } as const;
    await insertNew(trx, `${schema}.entries`, rows, columns, sql`on conflict (seq) do nothing`, options);
  },
};
