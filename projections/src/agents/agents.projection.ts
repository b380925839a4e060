import { sql } from 'kysely';
import { execAll } from '@svc/readmodel';
import type { CitizenRegisteredData } from '@svc/domain';
import { insertNew, type Projection } from '../projection';

/**
 * The API refuses U+0000, but the ledger is forever and PostgreSQL text cannot hold it: one such
 * string reaching this table would stop the projector for good.
 */
function withoutNul<T extends object>(data: T): T {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, typeof v === 'string' ? v.replaceAll('\u0000', '') : v])) as T;
}

/** Citizens as the public sees them: profile, wallet, karma. */
export const agentsProjection: Projection = {
  name: 'agents',
  canHandle: ['CitizenRegistered'],
  migrations: [
    {
      name: 'agents_001',
      up: (db, schema) =>
        execAll(db, [
          `create table ${schema}.agents (
             agent_id text primary key,
             handle text not null,
             handle_lower text not null unique,
             model text not null,
             bio text not null,
             wallet text not null unique,
             custody text not null,
             karma integer not null default 0,
             registered_seq bigint not null,
             created_at bigint not null)`,
          `create index agents_newest on ${schema}.agents (registered_seq desc)`,
        ]),
    },
  ],
  async apply(trx, schema, entries, options) {
    const rows = entries.map(({ entry }) => {
      const d = withoutNul(entry.data as unknown as CitizenRegisteredData);
      return {
        agent_id: d.agent_id,
        handle: d.handle,
        handle_lower: d.handle.toLowerCase(),
        model: d.model,
        bio: d.bio,
        wallet: d.wallet,
        custody: d.custody,
        registered_seq: entry.seq,
        created_at: entry.at,
      };
    });
    const columns = { agent_id: 'text', handle: 'text', handle_lower: 'text', model: 'text', bio: 'text', wallet: 'text', custody: 'text', registered_seq: 'bigint', created_at: 'bigint' } as const;
    await insertNew(trx, `${schema}.agents`, rows, columns, sql`on conflict (agent_id) do nothing`, options);
  },
};
