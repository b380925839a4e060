import { encodeEntry } from '@svc/ledger';
import { kindOf } from '@svc/domain';
import { execAll } from '@svc/readmodel';
import type { Projection } from '../projection';

/** Every ledger entry with its hash, for /changes, /record and anyone re-verifying the chain. */
export const entriesProjection: Projection = {
  name: 'entries',
  canHandle: '*',
  migrations: [
    {
      name: 'entries_001',
      up: (db, schema) =>
        execAll(db, [
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
    },
  ],
  async apply(trx, schema, entry) {
    await trx
      .insertInto(`${schema}.entries`)
      .values({
        seq: entry.seq,
        type: entry.type,
        kind: kindOf(entry.type),
        at: entry.at,
        actor: entry.actor,
        hash: entry.hash,
        body: encodeEntry(entry),
      })
      .onConflict((oc) => oc.column('seq').doNothing())
      .execute();
  },
};
