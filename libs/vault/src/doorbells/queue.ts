import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DeliveredEntry, ProjectedEntries } from './projectedEntries';
import type { DeliveryStatus, DoorbellSigning, DoorbellTables } from './schema';
import type { DoorbellSeals } from './seals';

/**
 * Consecutive failed attempts of a doorbell after which it is muted (the spec's "muted after 10 failures").
 * A doorbell has one send in flight at a time and pauses for a growing backoff after each failure, so
 * these ten span a sustained outage, not one burst.
 */
export const MUTE_AFTER_FAILURES = 10;
/** Attempts one delivery gets before it is given up as `failed` (a replay queues it again). */
export const MAX_TRIES = 10;

/** A delivery one worker holds until it records the outcome (or its lease runs out). */
export interface ClaimedDelivery {
  id: string;
  claimId: string;
  doorbellId: string;
  /** Unsealed; empty when it could not be (then `sealError`). */
  url: string;
  /** The HMAC key, unsealed; `sealError` when it could not be (then nothing is sent unsigned). */
  secret?: Buffer;
  signing: DoorbellSigning;
  /** Why the URL or the secret could not be unsealed: recorded as the attempt's error, and nothing is sent. */
  sealError?: string;
  seq: number;
  kind: string;
  /** The number of this attempt over the delivery's life, from 1. */
  attempt: number;
  /** Attempts since the delivery was last queued. */
  tries: number;
  /** Undefined while the read model does not hold the entry (e.g. during a rebuild). */
  entry?: DeliveredEntry;
}

export interface AttemptOutcome {
  startedAt: number;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
  ok: boolean;
}

/** What one recorded attempt did to its delivery and its doorbell. */
export interface RecordedOutcome {
  /** Undefined when the delivery was not moved: the doorbell was removed, or another worker holds it now. */
  status: DeliveryStatus | undefined;
  muted: boolean;
  /** The doorbell's consecutive failures after this attempt. */
  failures: number;
}

/** Milliseconds to wait before the n-th retry (from 1): of a delivery, and of a doorbell after n failures in a row. */
export type Backoff = (n: number) => number;

/**
 * The deliveries waiting to be sent, one send in flight per doorbell: claimed under a lease, and after a
 * failure retried with backoff, the doorbell paused and, after MUTE_AFTER_FAILURES in a row, muted.
 */
export class DeliveryQueue {
  constructor(
    private readonly db: Kysely<any>,
    private readonly tables: DoorbellTables,
    private readonly seals: DoorbellSeals,
    private readonly entries: ProjectedEntries,
  ) {}

  /**
   * Takes due deliveries for this worker: from at most `max` doorbells, one delivery (the lowest seq due)
   * of each doorbell that has no send in flight and is not pausing after a failure, the doorbells whose
   * oldest due delivery waited longest first.
   * So a slow or failing receiver holds one send at a time, whatever its backlog, and never the queue.
   * The claim is on the doorbell row (claim_id, leased until next_send_at), taken FOR UPDATE SKIP LOCKED:
   * two workers never claim for one doorbell, and a worker that dies loses its claim when the lease ends.
   */
  async claimDue(max: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    const claimId = randomUUID();
    const lease = Math.max(1, Math.round(leaseMs));
    const claimed = await this.db.transaction().execute(async (trx) => {
      // A doorbell another worker claimed since this statement's snapshot is rechecked on its new row
      // (READ COMMITTED), where next_send_at is in the future: it drops out.
      const ready = await sql<{ id: string }>`
        select b.id from ${this.tables.ref('doorbells')} b
          join lateral (
            select d.due_at from ${this.tables.ref('doorbell_deliveries')} d
             where d.doorbell_id = b.id and d.status = 'pending' and d.due_at <= now()
             order by d.due_at limit 1) oldest on true
         where not b.muted and b.next_send_at <= now()
         order by oldest.due_at, b.id
         limit ${Math.max(1, Math.floor(max))}
         for update of b skip locked`.execute(trx);
      if (ready.rows.length === 0) return [];
      // A statement of its own, after the locks: it sees what committed while they were taken. Within a
      // doorbell, ledger order among what is due; a delivery waiting out its own retry is not due, so it
      // does not hold up the others.
      const picked = await sql<{ id: string; doorbell_id: string }>`
        select first.id, first.doorbell_id from unnest(${ready.rows.map((r) => r.id)}::text[]) as b(id)
          join lateral (
            select d.id, d.doorbell_id from ${this.tables.ref('doorbell_deliveries')} d
             where d.doorbell_id = b.id and d.status = 'pending' and d.due_at <= now()
             order by d.seq limit 1
             for update skip locked) first on true`.execute(trx);
      if (picked.rows.length === 0) return [];
      await trx
        .updateTable(this.tables.name('doorbells'))
        .set({ claim_id: claimId, next_send_at: sql`now() + ${lease} * interval '1 millisecond'` })
        .where(
          'id',
          'in',
          picked.rows.map((r) => r.doorbell_id),
        )
        .execute();
      return trx
        .updateTable(this.tables.name('doorbell_deliveries'))
        .set({
          claim_id: claimId,
          attempts: sql`attempts + 1`,
          tries: sql`tries + 1`,
          due_at: sql`now() + ${lease} * interval '1 millisecond'`,
          updated_at: Date.now(),
        })
        .where(
          'id',
          'in',
          picked.rows.map((r) => r.id),
        )
        .returning(['id', 'doorbell_id', 'seq', 'kind', 'attempts', 'tries'])
        .execute();
    });
    if (claimed.length === 0) return [];
    const doorbellIds = [...new Set(claimed.map((c) => c.doorbell_id as string))];
    const doorbells = await this.db.selectFrom(this.tables.name('doorbells')).select(['id', 'url_sealed', 'secret_sealed', 'signing']).where('id', 'in', doorbellIds).execute();
    const byId = new Map(doorbells.map((d) => [d.id as string, d]));
    const seqs = [...new Set(claimed.map((c) => Number(c.seq)))];
    const entryBySeq = new Map((await this.entries.at(this.db, seqs)).map((entry) => [entry.seq, toDeliveredEntry(entry)]));
    const out: ClaimedDelivery[] = [];
    for (const row of claimed) {
      const doorbell = byId.get(row.doorbell_id as string);
      if (!doorbell) continue; // removed meanwhile: its rows go with it
      const delivery: ClaimedDelivery = {
        id: row.id as string,
        claimId,
        doorbellId: doorbell.id as string,
        url: '',
        signing: doorbell.signing as DoorbellSigning,
        seq: Number(row.seq),
        kind: row.kind as string,
        attempt: Number(row.attempts),
        tries: Number(row.tries),
        entry: entryBySeq.get(Number(row.seq)),
      };
      try {
        delivery.url = this.seals.unsealUrl(doorbell.id as string, doorbell.url_sealed as string);
      } catch {
        delivery.sealError = 'the doorbell URL cannot be unsealed (was SERVICE_MASTER_KEY changed?); remove the doorbell and register the URL again';
      }
      if (doorbell.secret_sealed && !delivery.sealError) {
        try {
          delivery.secret = this.seals.unsealSecret(doorbell.id as string, doorbell.secret_sealed as string);
        } catch {
          delivery.sealError = 'the doorbell secret cannot be unsealed (was SERVICE_MASTER_KEY changed?); register the URL again with its secret';
        }
      }
      out.push(delivery);
    }
    return out;
  }

  /**
   * Records one attempt, and what follows from it, in one transaction. Delivered: the doorbell's failures
   * and pause are reset. Failed: the delivery is retried after `backoff(tries)` or given up after
   * MAX_TRIES, and the doorbell counts one more consecutive failure and sends nothing before
   * `backoff(failures)`; at MUTE_AFTER_FAILURES it is muted and its pending deliveries are skipped.
   * Either way the doorbell's claim is released. A worker whose lease ran out still logs its attempt but
   * moves nothing: another worker holds the doorbell now.
   */
  async recordAttempt(delivery: ClaimedDelivery, outcome: AttemptOutcome, backoff: Backoff): Promise<RecordedOutcome> {
    return this.db.transaction().execute(async (trx) => {
      // The doorbell first, then its deliveries: the order every writer here takes, so none deadlocks.
      const owner = await trx.selectFrom(this.tables.name('doorbells')).select(['claim_id', 'failures', 'muted']).where('id', '=', delivery.doorbellId).forUpdate().executeTakeFirst();
      const exists = owner && (await trx.selectFrom(this.tables.name('doorbell_deliveries')).select('id').where('id', '=', delivery.id).forUpdate().executeTakeFirst());
      if (!owner || !exists) return { muted: false, status: undefined, failures: 0 }; // the doorbell was removed
      await trx
        .insertInto(this.tables.name('doorbell_attempts'))
        .values({
          delivery_id: delivery.id,
          n: delivery.attempt,
          started_at: outcome.startedAt,
          duration_ms: Math.max(0, Math.round(outcome.durationMs)),
          http_status: outcome.httpStatus,
          error: outcome.error,
          ok: outcome.ok,
        })
        .onConflict((oc) => oc.columns(['delivery_id', 'n']).doNothing())
        .execute();
      if (owner.claim_id !== delivery.claimId) return { muted: Boolean(owner.muted), status: undefined, failures: Number(owner.failures) };
      const now = Date.now();
      if (outcome.ok) {
        await trx.updateTable(this.tables.name('doorbells')).set({ failures: 0, claim_id: null, next_send_at: sql`now()` }).where('id', '=', delivery.doorbellId).execute();
        const moved = await trx
          .updateTable(this.tables.name('doorbell_deliveries'))
          .set({ status: 'delivered', delivered_at: now, last_http_status: outcome.httpStatus, last_error: null, claim_id: null, updated_at: now })
          .where('id', '=', delivery.id)
          .where('claim_id', '=', delivery.claimId)
          .where('status', 'in', ['pending', 'skipped'])
          .executeTakeFirst();
        return { muted: Boolean(owner.muted), status: Number(moved.numUpdatedRows) === 1 ? ('delivered' as const) : undefined, failures: 0 };
      }
      const failures = Number(owner.failures) + 1;
      const muting = !owner.muted && failures >= MUTE_AFTER_FAILURES;
      const muted = Boolean(owner.muted) || muting;
      await trx
        .updateTable(this.tables.name('doorbells'))
        .set({
          failures,
          muted,
          ...(muting ? { muted_at: now } : {}),
          claim_id: null,
          next_send_at: sql`now() + ${Math.max(0, Math.round(backoff(failures)))} * interval '1 millisecond'`,
          updated_at: now,
        })
        .where('id', '=', delivery.doorbellId)
        .execute();
      const giveUp = delivery.tries >= MAX_TRIES;
      const moved = await trx
        .updateTable(this.tables.name('doorbell_deliveries'))
        .set({
          status: giveUp ? 'failed' : 'pending',
          due_at: sql`now() + ${Math.max(0, Math.round(backoff(delivery.tries)))} * interval '1 millisecond'`,
          last_http_status: outcome.httpStatus,
          last_error: outcome.error,
          claim_id: null,
          updated_at: now,
        })
        .where('id', '=', delivery.id)
        .where('claim_id', '=', delivery.claimId)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (muted) {
        await trx
          .updateTable(this.tables.name('doorbell_deliveries'))
          .set({ status: 'skipped', updated_at: now })
          .where('doorbell_id', '=', delivery.doorbellId)
          .where('status', '=', 'pending')
          .execute();
      }
      const status: DeliveryStatus | undefined = Number(moved.numUpdatedRows) !== 1 ? undefined : giveUp ? 'failed' : muted ? 'skipped' : 'pending';
      return { muted, status, failures };
    });
  }

  /** Gives a claimed delivery back untried (e.g. a stopping worker), due after `afterMs`, the attempt not counted. */
  async release(delivery: ClaimedDelivery, afterMs = 0): Promise<void> {
    const after = Math.max(0, Math.round(afterMs));
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable(this.tables.name('doorbells'))
        .set({ claim_id: null, next_send_at: sql`now() + ${after} * interval '1 millisecond'` })
        .where('id', '=', delivery.doorbellId)
        .where('claim_id', '=', delivery.claimId)
        .execute();
      await trx
        .updateTable(this.tables.name('doorbell_deliveries'))
        .set({ due_at: sql`now() + ${after} * interval '1 millisecond'`, claim_id: null, attempts: sql`greatest(attempts - 1, 0)`, tries: sql`greatest(tries - 1, 0)`, updated_at: Date.now() })
        .where('id', '=', delivery.id)
        .where('claim_id', '=', delivery.claimId)
        .where('status', '=', 'pending')
        .execute();
    });
  }

  /**
   * Milliseconds until some unmuted doorbell may be sent to (its oldest pending delivery due, and its
   * pause or lease over); undefined when none has anything pending.
   */
  async msUntilNextDue(): Promise<number | undefined> {
    const result = await sql<{ ms: string | number | null }>`
      select extract(epoch from (min(greatest(b.next_send_at, oldest.due_at)) - now())) * 1000 as ms
        from ${this.tables.ref('doorbells')} b
        join lateral (
          select d.due_at from ${this.tables.ref('doorbell_deliveries')} d
           where d.doorbell_id = b.id and d.status = 'pending'
           order by d.due_at limit 1) oldest on true
       where not b.muted`.execute(this.db);
    const ms = result.rows[0]?.ms;
    return ms === null || ms === undefined ? undefined : Math.max(0, Number(ms));
  }
}

/** Only what a delivery carries: not `prev`, nor anything else the read model adds. */
function toDeliveredEntry(entry: DeliveredEntry): DeliveredEntry {
  return { seq: entry.seq, type: entry.type, at: entry.at, actor: entry.actor, data: entry.data, hash: entry.hash };
}
