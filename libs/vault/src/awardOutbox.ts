import { sql } from 'kysely';
import { execAll, migrate, type Migration, type SqlDatabase } from '@svc/readmodel';

const migrations: Migration[] = [
  {
    name: 'award_outbox_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.award_outbox (
           bounty_id text primary key,
           attempt_id text not null,
           poster_id text not null,
           submission_id text not null,
           state text not null check (state in ('reserved', 'sent', 'done', 'rejected')),
           signature text unique,
           transaction text,
           blockhash text,
           last_valid_block_height bigint,
           lease_until timestamptz not null,
           error text,
           created_at timestamptz not null default now(),
           updated_at timestamptz not null default now())`,
        `create index award_outbox_due on ${schema}.award_outbox (lease_until) where state in ('reserved', 'sent')`,
      ]),
  },
  {
    // An unsigned payment handed to the poster (execute=false, or custody self) holds the bounty too, until
    // it lands (found by its reference key) or its blockhash expires.
    name: 'award_outbox_002',
    up: (db, schema) =>
      execAll(db, [
        `alter table ${schema}.award_outbox drop constraint award_outbox_state_check`,
        `alter table ${schema}.award_outbox add constraint award_outbox_state_check check (state in ('reserved', 'unsigned', 'sent', 'done', 'rejected'))`,
        `alter table ${schema}.award_outbox add column reference text, add column min_slot bigint`,
        `drop index ${schema}.award_outbox_due`,
        `create index award_outbox_due on ${schema}.award_outbox (lease_until) where state in ('reserved', 'unsigned', 'sent')`,
      ]),
  },
];

/**
 * - `reserved`: one caller holds the bounty's only payment; nothing is signed yet, so nothing can have been sent.
 * - `unsigned`: the poster was handed the unsigned payment (`transaction`) to sign and send themselves; it is
 *   found on-chain by its `reference` key, and can no longer land once its blockhash expires.
 * - `sent`: the signed transaction is stored and may be on its way; only its on-chain status settles it.
 * - `done`: the payment is on the ledger. `rejected`: paid, but the ledger refused the record (needs a human).
 */
export type AwardOutboxState = 'reserved' | 'unsigned' | 'sent' | 'done' | 'rejected';

export interface AwardOutboxRow {
  bountyId: string;
  attemptId: string;
  posterId: string;
  submissionId: string;
  state: AwardOutboxState;
  signature: string | null;
  /** base64 of the signed wire transaction (`unsigned`: of the unsigned one handed out). */
  transaction: string | null;
  /** `unsigned`: the read-only key on the transfer that finds it on-chain. */
  reference: string | null;
  /** `unsigned`: no slot before this one can hold the payment. */
  minSlot: number | null;
  blockhash: string | null;
  lastValidBlockHeight: number | null;
  leaseUntil: Date;
  error: string | null;
}

export interface AwardReservation {
  bountyId: string;
  attemptId: string;
  posterId: string;
  submissionId: string;
  /** How long the reserving process may work undisturbed before a recovery pass takes the row over. */
  leaseMs: number;
}

/**
 * The durable outbox of bounty award payments, private to the command side. Its primary key is the
 * bounty: whoever inserts the row is the one caller, in any API process, that may pay the reward. The
 * signed transaction is stored before it is sent, so a crash between paying and recording is finished
 * by a recovery pass (claimDue) from what is stored here.
 */
export class AwardOutbox {
  constructor(
    private readonly database: SqlDatabase,
    private readonly schema = 'vault',
  ) {}

  async init(): Promise<this> {
    await migrate(this.database.db, this.schema, migrations);
    return this;
  }

  private get table(): string {
    return `${this.schema}.award_outbox`;
  }

  private lease(ms: number) {
    return sql<Date>`now() + ${Math.max(0, Math.round(ms))} * interval '1 millisecond'`;
  }

  /** Takes the bounty's one payment slot; otherwise answers the state of whoever holds it. */
  async reserve(reservation: AwardReservation): Promise<{ ok: true } | { ok: false; holder: AwardOutboxRow }> {
    return this.take(reservation, { state: 'reserved' });
  }

  /**
   * Takes the bounty's one payment slot for an unsigned payment handed to the poster; otherwise answers
   * the state of whoever holds it.
   */
  async reserveUnsigned(
    reservation: AwardReservation & { reference: string; transaction: string; blockhash: string; lastValidBlockHeight: number; minSlot: number },
  ): Promise<{ ok: true } | { ok: false; holder: AwardOutboxRow }> {
    const { reference, transaction, blockhash, lastValidBlockHeight, minSlot } = reservation;
    return this.take(reservation, { state: 'unsigned', reference, transaction, blockhash, last_valid_block_height: lastValidBlockHeight, min_slot: minSlot });
  }

  private async take(reservation: AwardReservation, columns: Record<string, unknown>): Promise<{ ok: true } | { ok: false; holder: AwardOutboxRow }> {
    const inserted = await this.database.db
      .insertInto(this.table)
      .values({
        bounty_id: reservation.bountyId,
        attempt_id: reservation.attemptId,
        poster_id: reservation.posterId,
        submission_id: reservation.submissionId,
        lease_until: this.lease(reservation.leaseMs),
        ...columns,
      })
      .onConflict((oc) => oc.column('bounty_id').doNothing())
      .returning('bounty_id')
      .executeTakeFirst();
    if (inserted) return { ok: true };
    const holder = await this.get(reservation.bountyId);
    // Released between the insert and the read: the slot is free again, so try once more.
    return holder ? { ok: false, holder } : this.take(reservation, columns);
  }

  /**
   * An unsigned payment was found confirmed on-chain: from here on it is a sent payment like any other,
   * with the signature and signed bytes the poster sent. False if the row is no longer that unsigned one.
   */
  async markUnsignedSent(bountyId: string, attemptId: string, sent: { signature: string; transaction: string; leaseMs: number }): Promise<boolean> {
    const result = await this.database.db
      .updateTable(this.table)
      .set({ state: 'sent', signature: sent.signature, transaction: sent.transaction, lease_until: this.lease(sent.leaseMs), updated_at: sql`now()` })
      .where('bounty_id', '=', bountyId)
      .where('attempt_id', '=', attemptId)
      .where('state', '=', 'unsigned')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Stores the signed transaction before it is sent; false if this attempt no longer holds the row. */
  async recordSigned(bountyId: string, attemptId: string, signed: { signature: string; transaction: string; blockhash: string; lastValidBlockHeight: number; leaseMs: number }): Promise<boolean> {
    const result = await this.database.db
      .updateTable(this.table)
      .set({
        state: 'sent',
        signature: signed.signature,
        transaction: signed.transaction,
        blockhash: signed.blockhash,
        last_valid_block_height: signed.lastValidBlockHeight,
        lease_until: this.lease(signed.leaseMs),
        updated_at: sql`now()`,
      })
      .where('bounty_id', '=', bountyId)
      .where('attempt_id', '=', attemptId)
      .where('state', '=', 'reserved')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Frees the bounty for another award: nothing was paid. Only the attempt that holds the row may,
   * and never once the payment is recorded.
   */
  async release(bountyId: string, attemptId: string): Promise<boolean> {
    const result = await this.database.db
      .deleteFrom(this.table)
      .where('bounty_id', '=', bountyId)
      .where('attempt_id', '=', attemptId)
      .where('state', 'in', ['reserved', 'unsigned', 'sent'])
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** The payment is on the ledger. */
  async markDone(bountyId: string, signature: string): Promise<void> {
    await this.database.db
      .updateTable(this.table)
      .set({ state: 'done', error: null, updated_at: sql`now()` })
      .where('bounty_id', '=', bountyId)
      .where('signature', '=', signature)
      .execute();
  }

  /** Paid on-chain, but the ledger refused to record it: kept for an operator, never retried. */
  async markRejected(bountyId: string, signature: string, error: string): Promise<void> {
    await this.database.db
      .updateTable(this.table)
      .set({ state: 'rejected', error, updated_at: sql`now()` })
      .where('bounty_id', '=', bountyId)
      .where('signature', '=', signature)
      .execute();
  }

  /** Lets a recovery pass take the row after `afterMs` (e.g. at once, when this process gave up on it). */
  async renewLease(bountyId: string, attemptId: string, afterMs: number): Promise<void> {
    await this.database.db
      .updateTable(this.table)
      .set({ lease_until: this.lease(afterMs), updated_at: sql`now()` })
      .where('bounty_id', '=', bountyId)
      .where('attempt_id', '=', attemptId)
      .execute();
  }

  async get(bountyId: string): Promise<AwardOutboxRow | undefined> {
    const row = await this.database.db.selectFrom(this.table).selectAll().where('bounty_id', '=', bountyId).executeTakeFirst();
    return row ? toRow(row) : undefined;
  }

  /**
   * Takes over one unfinished row whose lease has run out, under a new attempt id and a fresh lease. SKIP
   * LOCKED keeps two processes' recovery passes from taking the same row; the lease keeps the next pass off
   * it while this one works outside the transaction.
   */
  async claimDue(attemptId: string, leaseMs: number): Promise<AwardOutboxRow | undefined> {
    return this.database.db.transaction().execute(async (trx) => {
      const due = await trx
        .selectFrom(this.table)
        .select('bounty_id')
        .where('state', 'in', ['reserved', 'unsigned', 'sent'])
        .where('lease_until', '<=', sql<Date>`now()`)
        .orderBy('lease_until')
        .limit(1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!due) return undefined;
      const claimed = await trx
        .updateTable(this.table)
        .set({ attempt_id: attemptId, lease_until: this.lease(leaseMs), updated_at: sql`now()` })
        .where('bounty_id', '=', due.bounty_id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRow(claimed);
    });
  }
}

function toRow(row: Record<string, any>): AwardOutboxRow {
  return {
    bountyId: row.bounty_id,
    attemptId: row.attempt_id,
    posterId: row.poster_id,
    submissionId: row.submission_id,
    state: row.state,
    signature: row.signature ?? null,
    transaction: row.transaction ?? null,
    reference: row.reference ?? null,
    minSlot: row.min_slot === null || row.min_slot === undefined ? null : Number(row.min_slot),
    blockhash: row.blockhash ?? null,
    lastValidBlockHeight: row.last_valid_block_height === null || row.last_valid_block_height === undefined ? null : Number(row.last_valid_block_height),
    leaseUntil: new Date(row.lease_until),
    error: row.error ?? null,
  };
}
