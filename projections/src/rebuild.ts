import { sql } from 'kysely';
import type { Bus } from '@svc/bus';
import type { EventStore } from '@svc/ledger';
import { quoteIdent, type SqlDatabase } from '@svc/readmodel';
import type { Projection } from './projection';
import { Projector } from './projector';

/**
 * Rebuilds every read model from seq 0 into a schema beside the live one, then swaps the two in one
 * transaction. The live schema serves reads until the swap; a running projector notices the moved
 * checkpoint and carries on from the rebuilt one.
 */
export async function rebuildReadModels(options: {
  database: SqlDatabase;
  store: EventStore;
  projections: Projection[];
  schema: string;
  bus?: Bus;
  batchSize?: number;
  onProgress?: (seq: number) => void;
}): Promise<number> {
  const { db } = options.database;
  const live = quoteIdent(options.schema);
  const nextName = `${options.schema}_rebuild`;
  const next = quoteIdent(nextName);
  const old = quoteIdent(`${options.schema}_old`);
  await sql.raw(`drop schema if exists ${next} cascade`).execute(db);
  const projector = await new Projector({ ...options, schema: nextName }).init();
  await projector.catchUp(options.onProgress);
  await db.transaction().execute(async (trx) => {
    const exists = await sql<{ n: number }>`select count(*)::int as n from pg_namespace where nspname = ${options.schema}`.execute(trx);
    if (Number(exists.rows[0]?.n) > 0) {
      // Holding the live checkpoint row keeps the live projector from committing across the swap.
      await sql.raw(`select seq from ${live}.checkpoints for update`).execute(trx);
      await sql.raw(`drop schema if exists ${old} cascade`).execute(trx);
      await sql.raw(`alter schema ${live} rename to ${old}`).execute(trx);
    }
    await sql.raw(`alter schema ${next} rename to ${live}`).execute(trx);
    await sql.raw(`drop schema if exists ${old} cascade`).execute(trx);
  });
  // Anything appended during the swap is applied by the live projector, or here if none runs.
  const after = await new Projector({ ...options }).init();
  return after.catchUp(options.onProgress);
}
