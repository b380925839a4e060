import { sql, type Kysely } from 'kysely';
import { newUlid } from '@svc/readmodel';
import type { ProjectedEntries } from './projectedEntries';
import type { DeliveryStatus, DoorbellTables } from './schema';

/** The latest attempts shown with each delivery. */
const ATTEMPTS_SHOWN = 20;

export interface DeliveryAttempt {
  n: number;
  at: number;
  ok: boolean;
  http_status: number | null;
  error: string | null;
  duration_ms: number;
}

export interface DeliveryLogItem {
  id: string;
  doorbell_id: string;
  seq: number;
  kind: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number | null;
  created_at: number;
  delivered_at: number | null;
  last_http_status: number | null;
  last_error: string | null;
  log: DeliveryAttempt[];
}

export type ReplayOutcome =
  | { ok: true; requeued: number; nextAfterSeq: number | null }
  | { ok: false; reason: 'not_found' | 'muted' }
  /** The doorbell already has `cap` deliveries pending: a replay would only lengthen its queue. */
  | { ok: false; reason: 'busy'; pending: number; cap: number };

/**
 * What a citizen sees of its doorbells' deliveries, one row per attempt, and how it has them sent again.
 * A replay queues rows for the delivery queue; a worker sends them.
 */
export class DeliveryLog {
  constructor(
    private readonly db: Kysely<any>,
    private readonly tables: DoorbellTables,
    private readonly entries: ProjectedEntries,
  ) {}

  /** The caller's deliveries, highest seq first, each with its latest attempts. */
  async deliveries(
    agentId: string,
    options: { doorbellId?: string; status?: DeliveryStatus; limit: number; before?: string },
  ): Promise<{ items: DeliveryLogItem[]; nextBefore: string | null }> {
    let query = this.db
      .selectFrom(`${this.tables.name('doorbell_deliveries')} as d`)
      .innerJoin(`${this.tables.name('doorbells')} as b`, 'b.id', 'd.doorbell_id')
      .select(sql<string | Date>`greatest(d.due_at, b.next_send_at)`.as('next_at'))
      .select([
        'd.id',
        'd.doorbell_id',
        'd.seq',
        'd.kind',
        'd.status',
        'd.attempts',
        'd.created_at',
        'd.delivered_at',
        'd.last_http_status',
        'd.last_error',
      ])
      .where('d.agent_id', '=', agentId)
      .orderBy('d.seq', 'desc')
      .orderBy('d.id', 'desc')
      .limit(options.limit);
    if (options.doorbellId) query = query.where('d.doorbell_id', '=', options.doorbellId);
    if (options.status) query = query.where('d.status', '=', options.status);
    if (options.before) {
      query = query.where(
        sql<boolean>`(d.seq, d.id) < (select c.seq, c.id from ${this.tables.ref('doorbell_deliveries')} c where c.id = ${options.before} and c.agent_id = ${agentId})`,
      );
    }
    const rows = await query.execute();
    const ids = rows.map((r) => r.id as string);
    const attempts = ids.length
      ? await sql<Record<string, any>>`
          select delivery_id, n, started_at, duration_ms, http_status, error, ok from (
            select a.*, row_number() over (partition by a.delivery_id order by a.n desc) as recent
              from ${this.tables.ref('doorbell_attempts')} a where a.delivery_id in (${sql.join(ids)})) shown
           where recent <= ${ATTEMPTS_SHOWN}
           order by delivery_id, n`.execute(this.db)
      : { rows: [] };
    const byDelivery = new Map<string, DeliveryAttempt[]>();
    for (const a of attempts.rows) {
      const list = byDelivery.get(a.delivery_id) ?? [];
      list.push({ n: Number(a.n), at: Number(a.started_at), ok: Boolean(a.ok), http_status: nullableNumber(a.http_status), error: a.error ?? null, duration_ms: Number(a.duration_ms) });
      byDelivery.set(a.delivery_id, list);
    }
    const items = rows.map((r): DeliveryLogItem => ({
      id: r.id as string,
      doorbell_id: r.doorbell_id as string,
      seq: Number(r.seq),
      kind: r.kind as string,
      status: r.status as DeliveryStatus,
      attempts: Number(r.attempts),
      next_attempt_at: r.status === 'pending' ? new Date(r.next_at as string | Date).getTime() : null,
      created_at: Number(r.created_at),
      delivered_at: nullableNumber(r.delivered_at),
      last_http_status: nullableNumber(r.last_http_status),
      last_error: (r.last_error as string | null) ?? null,
      log: byDelivery.get(r.id as string) ?? [],
    }));
    return { items, nextBefore: rows.length === options.limit ? (ids[ids.length - 1] ?? null) : null };
  }

  /**
   * Queues one delivery again, due now with a fresh set of tries, unless a worker is sending it right now.
   * Refused (`busy`) when it is not pending already and its doorbell has `cap` deliveries pending.
   */
  async replayDelivery(agentId: string, deliveryId: string, cap: number): Promise<ReplayOutcome> {
    return this.db.transaction().execute(async (trx) => {
      const found = await trx
        .selectFrom(`${this.tables.name('doorbell_deliveries')} as d`)
        .innerJoin(`${this.tables.name('doorbells')} as b`, 'b.id', 'd.doorbell_id')
        .select(['d.id', 'd.doorbell_id'])
        .where('d.id', '=', deliveryId)
        .where('d.agent_id', '=', agentId)
        .executeTakeFirst();
      if (!found) return { ok: false as const, reason: 'not_found' as const };
      // Locked like a claim takes it, so the count below holds until this commits.
      const doorbell = await trx.selectFrom(this.tables.name('doorbells')).select('muted').where('id', '=', found.doorbell_id).forUpdate().executeTakeFirst();
      const delivery = await trx.selectFrom(this.tables.name('doorbell_deliveries')).select('status').where('id', '=', deliveryId).forUpdate().executeTakeFirst();
      if (!doorbell || !delivery) return { ok: false as const, reason: 'not_found' as const };
      if (doorbell.muted) return { ok: false as const, reason: 'muted' as const };
      if (delivery.status !== 'pending') {
        const pending = await this.pendingCount(trx, found.doorbell_id as string);
        if (pending >= cap) return { ok: false as const, reason: 'busy' as const, pending, cap };
      }
      const moved = await trx
        .updateTable(this.tables.name('doorbell_deliveries'))
        .set({ status: 'pending', tries: 0, due_at: sql`now()`, claim_id: null, updated_at: Date.now() })
        .where('id', '=', deliveryId)
        .where((eb) => eb.or([eb('status', '<>', 'pending'), eb('claim_id', 'is', null)]))
        .executeTakeFirst();
      return { ok: true as const, requeued: Number(moved.numUpdatedRows), nextAfterSeq: null };
    });
  }

  /**
   * Queues entries after `afterSeq` that the doorbell rings for, due now: existing deliveries again
   * (unless a worker is sending one right now), missing ones for the first time. At most as many as keep
   * the doorbell's pending deliveries within `cap`; with none left to take it is refused (`busy`).
   */
  async replayAfter(agentId: string, doorbellId: string, afterSeq: number, cap: number): Promise<ReplayOutcome> {
    return this.db.transaction().execute(async (trx) => {
      // FOR UPDATE, not SHARE: two replays of one doorbell take turns, so neither counts past the other.
      const doorbell = await trx
        .selectFrom(this.tables.name('doorbells'))
        .select(['id', 'kinds', 'muted'])
        .where('id', '=', doorbellId)
        .where('agent_id', '=', agentId)
        .forUpdate()
        .executeTakeFirst();
      if (!doorbell) return { ok: false as const, reason: 'not_found' as const };
      if (doorbell.muted) return { ok: false as const, reason: 'muted' as const };
      const pending = await this.pendingCount(trx, doorbellId);
      const room = cap - pending;
      if (room <= 0) return { ok: false as const, reason: 'busy' as const, pending, cap };
      const kinds = String(doorbell.kinds).split(',');
      const ringing = await this.entries.kindsAfter(trx, afterSeq, { limit: room, kinds }).execute();
      if (ringing.length === 0) return { ok: true as const, requeued: 0, nextAfterSeq: null };
      const now = Date.now();
      const queued = await trx
        .insertInto(this.tables.name('doorbell_deliveries'))
        .values(
          ringing.map((e) => ({
            id: `dlv_${newUlid()}`,
            doorbell_id: doorbellId,
            agent_id: agentId,
            seq: Number(e.seq),
            kind: e.kind,
            status: 'pending',
            created_at: now,
            updated_at: now,
          })),
        )
        .onConflict((oc) =>
          oc
            .columns(['doorbell_id', 'seq'])
            .doUpdateSet({ status: 'pending', tries: 0, due_at: sql`now()`, claim_id: null, updated_at: now })
            .where((eb) =>
              eb.or([eb(sql.ref(`${this.tables.name('doorbell_deliveries')}.status`), '<>', 'pending'), eb(sql.ref(`${this.tables.name('doorbell_deliveries')}.claim_id`), 'is', null)]),
            ),
        )
        .returning('id')
        .execute();
      const last = Number(ringing[ringing.length - 1]!.seq);
      return { ok: true as const, requeued: queued.length, nextAfterSeq: ringing.length === room ? last : null };
    });
  }

  /** How many deliveries of this doorbell are waiting (queued, retrying or being sent). */
  private async pendingCount(trx: Kysely<any>, doorbellId: string): Promise<number> {
    const row = await trx
      .selectFrom(this.tables.name('doorbell_deliveries'))
      .select((eb) => eb.fn.countAll().as('n'))
      .where('doorbell_id', '=', doorbellId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}

function nullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}
