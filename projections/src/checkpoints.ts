import { sql, type Kysely } from 'kysely';
import type { Notification } from '@svc/bus';
import type { LedgerEntry } from '@svc/ledger';
import { execAll, quoteIdent, type Migration } from '@svc/readmodel';

/**
 * The projections that the one checkpoint `main` stood for before each projection had its own. A migration is
 * history: a projection added since starts from seq 0, not from where `main` was.
 */
const FOLLOWED_BY_MAIN = ['entries', 'agents', 'posts', 'bounties', 'actions', 'inbox', 'search', 'tokens', 'agent_mints', 'treasury'];

/** The checkpoints table: one row per projection, the seq up to which that projection has applied the ledger. */
export function checkpointMigrations(): Migration[] {
  return [
    {
      name: 'checkpoints_001',
      up: (db, schema) =>
        execAll(db, [
          `create table ${schema}.checkpoints (name text primary key, seq bigint not null, updated_at timestamptz not null default now())`,
          `insert into ${schema}.checkpoints (name, seq) values ('main', -1)`,
        ]),
    },
    {
      // Every projection that `main` served is where `main` was, so an existing database does not replay anything.
      name: 'checkpoints_002',
      up: (db, schema) =>
        execAll(db, [
          `insert into ${schema}.checkpoints (name, seq)
             select p.name, c.seq from ${schema}.checkpoints c cross join unnest(array[${FOLLOWED_BY_MAIN.map((n) => `'${n}'`).join(', ')}]) as p(name)
             where c.name = 'main' and c.seq >= 0
           on conflict (name) do nothing`,
          `delete from ${schema}.checkpoints where name = 'main'`,
        ]),
    },
  ];
}

/** Gives each named projection a checkpoint at -1 (nothing applied) unless it has one. */
export async function ensureCheckpoints(db: Kysely<any>, schema: string, names: readonly string[]): Promise<void> {
  await sql`insert into ${sql.raw(quoteIdent(schema))}.checkpoints (name, seq) select unnest(${[...names]}::text[]), -1 on conflict (name) do nothing`.execute(db);
}

/** Each projection's checkpoint in the schema. */
export async function readCheckpoints(db: Kysely<any>, schema: string): Promise<Map<string, number>> {
  const rows = await db.selectFrom(`${schema}.checkpoints`).select(['name', 'seq']).execute();
  return new Map(rows.map((row) => [String(row.name), Number(row.seq)]));
}

/**
 * The seq up to which every named projection has applied the ledger (every projection of the schema when none
 * are named): the lowest of their checkpoints. A projection without one has applied nothing.
 */
export async function readCheckpoint(db: Kysely<any>, schema: string, names?: readonly string[]): Promise<number> {
  return lowestOf(await readCheckpoints(db, schema), names);
}

/** The lowest position of the named projections (of all when none are named); -1 for one without a position, or none at all. */
export function lowestOf(positions: ReadonlyMap<string, number>, names?: readonly string[]): number {
  const seqs = names ? names.map((name) => positions.get(name) ?? -1) : [...positions.values()];
  return seqs.length === 0 ? -1 : Math.min(...seqs);
}

/** Sets the named projections' checkpoints outright: for a rebuild's load, which nothing else writes to. */
export async function writeCheckpoint(db: Kysely<any>, schema: string, names: readonly string[], seq: number): Promise<void> {
  await sql`insert into ${sql.raw(quoteIdent(schema))}.checkpoints (name, seq) select unnest(${[...names]}::text[]), ${seq}
    on conflict (name) do update set seq = excluded.seq, updated_at = now()`.execute(db);
}

/**
 * Takes the named projections' checkpoints for the rest of the transaction and returns where they are. Rows are
 * taken in name order, so two transactions that want some of the same rows never wait for each other in a circle.
 */
export async function lockCheckpoints(trx: Kysely<any>, schema: string, names: readonly string[]): Promise<Map<string, number>> {
  const rows = await sql<{ name: string; seq: string | number }>`
    select name, seq from ${sql.raw(quoteIdent(schema))}.checkpoints where name = any(${[...names]}::text[]) order by name for update`.execute(trx);
  return new Map(rows.rows.map((row) => [row.name, Number(row.seq)]));
}

export class CheckpointMovedError extends Error {
  constructor(readonly names: readonly string[]) {
    super(`the checkpoints of ${names.join(', ')} moved under this projector: another process changed them`);
  }
}

/**
 * Moves each projection's checkpoint from where it was to `to`, in one compare-and-set statement; throws
 * CheckpointMovedError, rolling the batch back, if any of them is no longer where it was.
 */
export async function moveCheckpoints(trx: Kysely<any>, schema: string, moves: ReadonlyMap<string, number>, to: number): Promise<void> {
  const names = [...moves.keys()];
  const moved = await sql`
    update ${sql.raw(quoteIdent(schema))}.checkpoints c set seq = ${to}, updated_at = now()
    from unnest(${names}::text[], ${[...moves.values()]}::bigint[]) as was(name, seq)
    where c.name = was.name and c.seq = was.seq`.execute(trx);
  if (Number(moved.numAffectedRows ?? 0) !== names.length) throw new CheckpointMovedError(names);
}

/**
 * What the projector publishes on PROJECTED_CHANNEL after a commit: the projections named in `projections` have
 * applied every ledger entry up to `seq`, and `entries` are the entries from `from` to `seq` that the commit
 * applied. In steady state one commit moves every projection and one notification names them all; a projection
 * that catches up on its own announces its own (older) positions.
 */
export interface ProjectedNotification extends Notification {
  kind: 'projected';
  seq: number;
  from: number;
  entries: LedgerEntry[];
  projections: string[];
}

/** Whether a notification announces progress of any of the named projections; one that names none (an older projector's) announces all. */
export function announces(message: Notification, names: readonly string[]): boolean {
  const listed = message.projections;
  if (!Array.isArray(listed)) return true;
  return names.some((name) => listed.includes(name));
}
