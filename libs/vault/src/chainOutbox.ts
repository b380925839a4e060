import { sql, type Kysely } from 'kysely';
import { holderGone, migrate, type Liveness, type SqlDatabase } from '@svc/readmodel';
import { chainOutboxMigrations } from './chainOutboxSchema';

/**
 * - `reserved`: the action is planned; nothing is signed, so nothing can have been sent.
 * - `unsigned`: handed out unsigned (`transaction`) for the citizen to sign and send; found on-chain by its
 *   `reference` key and its exact message, and unable to land once its blockhash expires.
 * - `sent`: the signed bytes are stored and may be on their way; only the chain settles it.
 * - `done`: confirmed and on the ledger (`receipt`). `failed`: the chain's verdict says it never took
 *   effect (`error`). `rejected`: confirmed, but the ledger refused the record (kept for an operator).
 */
export type OutboxState = 'reserved' | 'unsigned' | 'sent' | 'done' | 'failed' | 'rejected';

/** A failure as the caller saw it: a domain code, a message and the program logs. */
export interface OutboxError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface OutboxRow {
  id: string;
  attemptId: string;
  agentId: string;
  action: string;
  idempotencyKey: string | null;
  holdKey: string | null;
  state: OutboxState;
  signature: string | null;
  /** sha256 (hex) of the message bytes: how a signed copy of a handed-out transaction is recognised. */
  messageHash: string | null;
  /** base64 of the wire transaction: signed once `sent`, unsigned (or co-signed by the service) while `unsigned`. */
  transaction: string | null;
  reference: string | null;
  minSlot: number | null;
  blockhash: string | null;
  lastValidBlockHeight: number | null;
  /** The ledger command that records the action once it confirms, without its signature. */
  record: Record<string, unknown>;
  /** The public facts of the action the caller was told (amounts, counterparty). */
  summary: Record<string, unknown>;
  receipt: { seq: number; hash: string } | null;
  error: OutboxError | null;
  leaseUntil: Date;
  /** Its holder's process is gone or its lease ran out: nobody is working on it, so another may. */
  abandoned: boolean;
}

export interface NewOutboxRow {
  id: string;
  attemptId: string;
  agentId: string;
  action: string;
  idempotencyKey?: string;
  holdKey?: string;
  record: Record<string, unknown>;
  summary: Record<string, unknown>;
  leaseMs: number;
}

export interface UnsignedHandout {
  transaction: string;
  messageHash: string;
  reference: string;
  minSlot: number;
  blockhash: string;
  lastValidBlockHeight: number;
  leaseMs: number;
}

export interface SignedSend {
  signature: string;
  transaction: string;
  messageHash: string;
  blockhash: string;
  lastValidBlockHeight: number;
  leaseMs: number;
}

type ClosingRows = Map<string, { receipt: { seq: number; hash: string }; answer: { resolve(done: boolean): void; reject(error: unknown): void } }>;

export type Reservation = { ok: true } | { ok: false; conflict: 'idempotency' | 'hold'; holder: OutboxRow };

/**
 * The durable outbox of on-chain actions, private to the command side. A row is written before anything
 * is signed, and the signed bytes before they are sent, so a crash anywhere is finished by a recovery pass
 * (claimDue) from what is stored here: a confirmed transaction is recorded exactly once, one that can no
 * longer land is marked failed, and nothing is ever signed twice for one row.
 */
export class ChainOutbox {
  /** markDoneIn's rows not yet written, by the transaction they are for. */
  private readonly closing = new WeakMap<Kysely<any>, ClosingRows>();

  constructor(
    private readonly database: SqlDatabase,
    private readonly schema = 'vault',
    /** This process's liveness: a row whose process died is due at once, not when its lease ends. */
    private readonly liveness?: Liveness,
  ) {}

  private get holder(): number | null {
    return this.liveness?.holder ?? null;
  }

  private abandoned() {
    return sql<boolean>`(lease_until <= now() or ${holderGone('holder')})`;
  }

  /** Every column, and whether the row is abandoned. */
  private selectRow() {
    return this.database.db.selectFrom(this.table).selectAll().select(this.abandoned().as('abandoned'));
  }

  async init(): Promise<this> {
    await migrate(this.database.db, this.schema, chainOutboxMigrations);
    return this;
  }

  private get table(): string {
    return `${this.schema}.chain_outbox`;
  }

  private lease(ms: number) {
    return sql<Date>`now() + ${Math.max(0, Math.round(ms))} * interval '1 millisecond'`;
  }

  /** The columns every new row starts with. */
  private newRow(row: NewOutboxRow, state: OutboxState) {
    return {
      id: row.id,
      attempt_id: row.attemptId,
      agent_id: row.agentId,
      action: row.action,
      idempotency_key: row.idempotencyKey ?? null,
      hold_key: row.holdKey ?? null,
      state,
      holder: this.holder,
      record: JSON.stringify(row.record),
      summary: JSON.stringify(row.summary),
      lease_until: this.lease(row.leaseMs),
    };
  }

  private signedColumns(signed: Omit<SignedSend, 'leaseMs'>) {
    return {
      signature: signed.signature,
      transaction: signed.transaction,
      message_hash: signed.messageHash,
      blockhash: signed.blockhash,
      last_valid_block_height: signed.lastValidBlockHeight,
    };
  }

  /**
   * Inserts `values` unless the same request (idempotency key) or a live action on the same hold has a row: then that
   * row. A conflicting row freed between the insert and the look is tried again, a few times.
   */
  private async insertOrHolder(row: NewOutboxRow, values: Record<string, unknown>): Promise<{ ok: true; row: OutboxRow } | Extract<Reservation, { ok: false }>> {
    for (let attempt = 0; ; attempt++) {
      const inserted = await this.database.db
        .insertInto(this.table)
        .values(values)
        .onConflict((oc) => oc.doNothing())
        .returningAll()
        // Just written by this process, whose holder is alive: only the lease can say abandoned, without a look at pg_locks.
        .returning(sql<boolean>`(lease_until <= now())`.as('abandoned'))
        .executeTakeFirst();
      if (inserted) return { ok: true, row: toRow(inserted) };
      if (row.idempotencyKey !== undefined) {
        const same = await this.byIdempotencyKey(row.agentId, row.idempotencyKey);
        if (same) return { ok: false, conflict: 'idempotency', holder: same };
      }
      if (row.holdKey !== undefined) {
        const holder = await this.byHold(row.holdKey);
        if (holder) return { ok: false, conflict: 'hold', holder };
      }
      if (attempt >= 4) throw new Error(`outbox insert of ${row.id} keeps conflicting with a row it cannot find`);
    }
  }

  /** Takes the row, unless the same request (idempotency key) or another live action on the same hold has one. */
  async reserve(row: NewOutboxRow): Promise<Reservation> {
    const taken = await this.insertOrHolder(row, this.newRow(row, 'reserved'));
    return taken.ok ? { ok: true } : taken;
  }

  /**
   * A row written once, already signed: the action, its keys and the signed bytes in one insert, before they are sent.
   * Unless the same request (idempotency key) or a live action on the same hold has a row: then nothing is written.
   */
  insertSigned(row: NewOutboxRow & SignedSend): Promise<{ ok: true; row: OutboxRow } | Extract<Reservation, { ok: false }>> {
    return this.insertOrHolder(row, { ...this.newRow(row, 'sent'), ...this.signedColumns(row) });
  }

  /** A transaction submitted by its signer that the service did not hand out: recorded from the start as sent. */
  async insertSent(row: NewOutboxRow & Omit<SignedSend, 'leaseMs'>): Promise<{ ok: true } | { ok: false; holder: OutboxRow }> {
    const inserted = await this.database.db
      .insertInto(this.table)
      .values({ ...this.newRow(row, 'sent'), ...this.signedColumns(row) })
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) return { ok: true };
    const holder = await this.bySignature(row.signature);
    if (!holder) throw new Error(`outbox insert of ${row.signature} conflicted with no row`);
    return { ok: false, holder };
  }

  private async move(id: string, attemptId: string | null, from: OutboxState[], set: Record<string, unknown>): Promise<OutboxRow | undefined> {
    let update = this.database.db
      .updateTable(this.table)
      .set({ ...set, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('state', 'in', from);
    if (attemptId !== null) update = update.where('attempt_id', '=', attemptId);
    const moved = await update.returningAll().returning(this.abandoned().as('abandoned')).executeTakeFirst();
    return moved ? toRow(moved) : undefined;
  }

  private async moved(id: string, attemptId: string | null, from: OutboxState[], set: Record<string, unknown>): Promise<boolean> {
    return (await this.move(id, attemptId, from, set)) !== undefined;
  }

  /** Stores the unsigned transaction handed out: the row as stored, or undefined if this attempt no longer holds it. */
  async markUnsigned(id: string, attemptId: string, handout: UnsignedHandout): Promise<OutboxRow | undefined> {
    return this.move(id, attemptId, ['reserved'], {
      state: 'unsigned',
      transaction: handout.transaction,
      message_hash: handout.messageHash,
      reference: handout.reference,
      min_slot: handout.minSlot,
      blockhash: handout.blockhash,
      last_valid_block_height: handout.lastValidBlockHeight,
      lease_until: this.lease(handout.leaseMs),
    });
  }

  /** Stores the signed bytes before they are sent: the row as stored, or undefined if this attempt no longer holds it. */
  async markSigned(id: string, attemptId: string, signed: SignedSend): Promise<OutboxRow | undefined> {
    return this.move(id, attemptId, ['reserved'], {
      state: 'sent',
      signature: signed.signature,
      transaction: signed.transaction,
      message_hash: signed.messageHash,
      blockhash: signed.blockhash,
      last_valid_block_height: signed.lastValidBlockHeight,
      lease_until: this.lease(signed.leaseMs),
    });
  }

  /** A handed-out transaction came back signed (through /tx/submit, or found on-chain): from here it is a sent one. */
  async markUnsignedSent(id: string, sent: { signature: string; transaction: string; leaseMs: number }): Promise<boolean> {
    return this.moved(id, null, ['unsigned'], { state: 'sent', signature: sent.signature, transaction: sent.transaction, lease_until: this.lease(sent.leaseMs) });
  }

  /** Nothing was signed (or the handout expired unsent): the row goes, freeing its hold and its idempotency key. */
  async release(id: string, attemptId: string | null): Promise<boolean> {
    let query = this.database.db.deleteFrom(this.table).where('id', '=', id).where('state', 'in', ['reserved', 'unsigned']);
    if (attemptId !== null) query = query.where('attempt_id', '=', attemptId);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** The chain says it never took effect. */
  async markFailed(id: string, error: OutboxError): Promise<boolean> {
    return this.moved(id, null, ['reserved', 'unsigned', 'sent'], { state: 'failed', error: JSON.stringify(error) });
  }

  /** On the ledger. */
  async markDone(id: string, receipt: { seq: number; hash: string } | null): Promise<boolean> {
    return this.moved(id, null, ['sent', 'rejected'], { state: 'done', receipt: receipt ? JSON.stringify(receipt) : null, error: null });
  }

  /**
   * On the ledger, written in the transaction that appends its record (`trx`): the row and the record commit together.
   * The calls made on one transaction before it next yields are joined into one UPDATE: the ledger writer runs a
   * batch's works together, and each of its records closes a row.
   */
  markDoneIn(trx: Kysely<any>, id: string, receipt: { seq: number; hash: string }): Promise<boolean> {
    let joined = this.closing.get(trx);
    if (!joined) {
      const rows: ClosingRows = new Map();
      joined = rows;
      this.closing.set(trx, rows);
      queueMicrotask(() => {
        this.closing.delete(trx);
        this.closeAll(trx, rows).catch((error: unknown) => rows.forEach(({ answer }) => answer.reject(error)));
      });
    }
    if (joined.has(id)) return Promise.resolve(false);
    return new Promise<boolean>((resolve, reject) => joined.set(id, { receipt, answer: { resolve, reject } }));
  }

  private async closeAll(trx: Kysely<any>, rows: ClosingRows): Promise<void> {
    const ids = [...rows.keys()];
    const receipts = [...rows.values()].map(({ receipt }) => JSON.stringify(receipt));
    const { rows: moved } = await sql<{ id: string }>`
      update ${sql.table(this.table)} o set state = 'done', receipt = v.receipt::jsonb, error = null, updated_at = now()
      from unnest(${ids}::text[], ${receipts}::text[]) as v(id, receipt)
      where o.id = v.id and o.state in ('sent', 'rejected')
      returning o.id`.execute(trx);
    const done = new Set(moved.map((row) => row.id));
    rows.forEach(({ answer }, id) => answer.resolve(done.has(id)));
  }

  /** Confirmed, but the ledger refused the record: kept for an operator, never retried. */
  async markRejected(id: string, error: OutboxError): Promise<boolean> {
    return this.moved(id, null, ['sent'], { state: 'rejected', error: JSON.stringify(error) });
  }

  /** Lets a recovery pass take the row after `afterMs` (at once, when this process gave up on it). */
  async renewLease(id: string, afterMs: number): Promise<void> {
    await this.database.db.updateTable(this.table).set({ lease_until: this.lease(afterMs), updated_at: sql`now()` }).where('id', '=', id).execute();
  }

  async get(id: string): Promise<OutboxRow | undefined> {
    return this.one('id', id);
  }

  async bySignature(signature: string): Promise<OutboxRow | undefined> {
    return this.one('signature', signature);
  }

  async byIdempotencyKey(agentId: string, key: string): Promise<OutboxRow | undefined> {
    const row = await this.selectRow().where('agent_id', '=', agentId).where('idempotency_key', '=', key).executeTakeFirst();
    return row ? toRow(row) : undefined;
  }

  /** The live (not failed) action holding `holdKey`. */
  async byHold(holdKey: string): Promise<OutboxRow | undefined> {
    const row = await this.selectRow().where('hold_key', '=', holdKey).where('state', '<>', 'failed').executeTakeFirst();
    return row ? toRow(row) : undefined;
  }

  /** This citizen's rows of these actions that are not settled yet (reserved, unsigned or sent). */
  async unsettled(agentId: string, actions: readonly string[]): Promise<OutboxRow[]> {
    if (actions.length === 0) return [];
    const rows = await this.selectRow()
      .where('agent_id', '=', agentId)
      .where('action', 'in', [...actions])
      .where('state', 'in', ['reserved', 'unsigned', 'sent'])
      .execute();
    return rows.map(toRow);
  }

  /** The citizen's action of this kind that was recorded last (its row closed with its record's receipt). */
  async lastDone(agentId: string, action: string): Promise<OutboxRow | undefined> {
    const row = await this.selectRow().where('agent_id', '=', agentId).where('action', '=', action).where('state', '=', 'done').orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
    return row ? toRow(row) : undefined;
  }

  /** The handed-out transaction of this citizen with exactly this message. */
  async byMessage(agentId: string, messageHash: string): Promise<OutboxRow | undefined> {
    const row = await this.selectRow()
      .where('agent_id', '=', agentId)
      .where('message_hash', '=', messageHash)
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    return row ? toRow(row) : undefined;
  }

  private async one(column: 'id' | 'signature', value: string): Promise<OutboxRow | undefined> {
    const row = await this.selectRow().where(column, '=', value).executeTakeFirst();
    return row ? toRow(row) : undefined;
  }

  /**
   * Takes over one unfinished row that nobody works on (its process is gone, or its lease ran out), under a new
   * attempt id, this process as its holder and a fresh lease. SKIP LOCKED keeps two processes' recovery passes
   * off the same row; the lease and the holder keep the next pass off it while this one works outside the
   * transaction.
   */
  async claimDue(attemptId: string, leaseMs: number): Promise<OutboxRow | undefined> {
    return this.database.db.transaction().execute(async (trx) => {
      const due = await trx
        .selectFrom(this.table)
        .select('id')
        .where('state', 'in', ['reserved', 'unsigned', 'sent'])
        .where(this.abandoned())
        .orderBy('lease_until')
        .limit(1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!due) return undefined;
      const claimed = await trx
        .updateTable(this.table)
        .set({ attempt_id: attemptId, holder: this.holder, lease_until: this.lease(leaseMs), updated_at: sql`now()` })
        .where('id', '=', due.id)
        .returningAll()
        .returning(sql<boolean>`false`.as('abandoned'))
        .executeTakeFirstOrThrow();
      return toRow(claimed);
    });
  }
}

const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;
const numberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

function toRow(row: Record<string, any>): OutboxRow {
  return {
    id: row.id,
    attemptId: row.attempt_id,
    agentId: row.agent_id,
    action: row.action,
    idempotencyKey: row.idempotency_key ?? null,
    holdKey: row.hold_key ?? null,
    state: row.state,
    signature: row.signature ?? null,
    messageHash: row.message_hash ?? null,
    transaction: row.transaction ?? null,
    reference: row.reference ?? null,
    minSlot: numberOrNull(row.min_slot),
    blockhash: row.blockhash ?? null,
    lastValidBlockHeight: numberOrNull(row.last_valid_block_height),
    record: json(row.record),
    summary: json(row.summary),
    receipt: row.receipt ? json(row.receipt) : null,
    error: row.error ? json(row.error) : null,
    leaseUntil: new Date(row.lease_until),
    abandoned: row.abandoned === true,
  };
}
