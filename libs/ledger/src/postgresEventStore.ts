import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import { execAll, migrate, type Migration, type SqlDatabase } from '@svc/readmodel';
import { PostgresStateTier } from './stateTier';
import {
  type AppendOptions,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type StoredEvent,
  WrongExpectedRevisionError,
  waitForWake,
} from './eventStore';
import type { ScanSource } from './chainScanThread';

const CHANNEL = 'es_appended';
/** A lost notification (reconnect, other process) costs at most this much latency. */
const FALLBACK_POLL_MS = 1000;
/** How many of the events this process appended last are kept at least (twice as many at most), so that its own subscribers need not read them back. */
const RECENT_EVENTS = 1000;

const migrations: Migration[] = [
  {
    name: '001_events',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.events (
           stream text not null,
           revision bigint not null,
           event_id uuid not null,
           type text not null,
           data text not null,
           recorded_at timestamptz not null default now(),
           primary key (stream, revision))`,
        `create unique index events_event_id on ${schema}.events (event_id)`,
        // Events are append-only. Any update or delete leaves a mark that /attest reads on every call,
        // so a changed byte is reported even inside a prefix already verified.
        `create table ${schema}.tamper_marks (stream text not null, revision bigint not null, op text not null, at timestamptz not null default now())`,
        `create function ${schema}.mark_tamper() returns trigger language plpgsql as $$
         begin
           insert into ${schema}.tamper_marks (stream, revision, op) values (old.stream, old.revision, tg_op);
           if tg_op = 'DELETE' then return old; end if;
           return new;
         end $$`,
        `create trigger events_tamper after update or delete on ${schema}.events
           for each row execute function ${schema}.mark_tamper()`,
      ]),
  },
  {
    name: '002_truncate_mark',
    up: (db, schema) =>
      execAll(db, [
        // A TRUNCATE fires no row trigger; it marks every stream from revision -1.
        `create function ${schema}.mark_truncate() returns trigger language plpgsql as $$
         begin
           insert into ${schema}.tamper_marks (stream, revision, op) select distinct stream, -1, tg_op from ${schema}.events;
           return null;
         end $$`,
        `create trigger events_truncate before truncate on ${schema}.events
           for each statement execute function ${schema}.mark_truncate()`,
      ]),
  },
  {
    // The ledger writer's decision state beyond what it keeps in memory (stateTier.ts).
    name: '003_decision_state',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.decision_state (map text not null, key text not null, value text not null, primary key (map, key))`,
        `create table ${schema}.decision_state_head (stream text primary key, seq bigint not null, hash text not null, at bigint not null, version integer not null)`,
      ]),
  },
  {
    // The append lock and the head read after it, in one round trip. Each statement of a volatile function reads
    // its own snapshot, so the head is read after the lock is held (one statement would read from before it).
    name: '004_lock_head',
    up: (db, schema) =>
      execAll(db, [
        `create function ${schema}.lock_head(target text) returns bigint language plpgsql volatile as $$
         begin
           perform pg_advisory_xact_lock(hashtext('es:' || target));
           return coalesce((select max(revision) from ${schema}.events where stream = target), -1);
         end $$`,
      ]),
  },
  {
    // A whole append in one round trip: the lock, the head read after it, the expected-revision check, the
    // rows and the notification that they commit. `head` is the revision before the append; nothing is
    // written unless `appended`. `expected` null is any revision.
    name: '005_append_events',
    up: (db, schema) =>
      execAll(db, [
        `create function ${schema}.append_events(target text, expected bigint, ids uuid[], types text[], datas text[], channel text,
           out head bigint, out appended boolean) language plpgsql volatile as $$
         begin
           perform pg_advisory_xact_lock(hashtext('es:' || target));
           head := coalesce((select max(revision) from ${schema}.events where stream = target), -1);
           appended := expected is null or head = expected;
           if not appended or cardinality(ids) = 0 then return; end if;
           insert into ${schema}.events (stream, revision, event_id, type, data)
             select target, head + u.n, u.id, u.type, u.data from unnest(ids, types, datas) with ordinality as u(id, type, data, n);
           perform pg_notify(channel, target || ':' || (head + cardinality(ids)));
         end $$`,
      ]),
  },
];

/** The event store on PostgreSQL (a server through `pg`, or PGlite). */
export class PostgresEventStore implements EventStore {
  readonly kind: string;
  private readonly local = new EventEmitter();
  private readonly recent = new Map<string, RecentEvents>();
  private unlisten?: Promise<() => Promise<void>>;

  constructor(
    private readonly database: SqlDatabase,
    private readonly schema = 'es',
    /** How long a subscriber waits without a wake before it reads anyway. */
    private readonly fallbackPollMs = FALLBACK_POLL_MS,
  ) {
    this.kind = database.kind === 'pg' ? 'postgres' : 'pglite';
    this.local.setMaxListeners(0);
  }

  async init(): Promise<this> {
    await migrate(this.database.db, this.schema, migrations);
    return this;
  }

  /** Where a worker thread can read the streams over its own connection; none on PGlite, which is in-process. */
  scanSource(): ScanSource | undefined {
    return this.database.url ? { url: this.database.url, table: this.events, applicationName: 'svc-attest' } : undefined;
  }

  private get events() {
    return `${this.schema}.events`;
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision, options: AppendOptions = {}): Promise<AppendResult> {
    const result = await this.database.db.transaction().execute(async (trx) => {
      const expectedHead = expected === 'any' ? null : expected === 'no_stream' ? -1 : expected;
      const { rows } = await sql<{ head: string | number; appended: boolean }>`
        select head, appended from ${sql.raw(this.schema)}.append_events(${stream}, ${expectedHead}, ${events.map((e) => e.id)}::uuid[],
          ${events.map((e) => e.type)}::text[], ${events.map((e) => e.data)}::text[], ${CHANNEL})`.execute(trx);
      const head = Number(rows[0]!.head);
      if (!rows[0]!.appended) {
        // Only a writer that is behind gets here, so the idempotency check costs nothing on the happy path.
        const found = events.length === 0 ? [] : await trx
          .selectFrom(this.events)
          .select(['revision', 'event_id'])
          .where('event_id', 'in', events.map((e) => e.id))
          .execute();
        if (found.length > 0 && found.length === events.length) {
          return { nextRevision: Math.max(...found.map((r) => Number(r.revision))), duplicate: true };
        }
        if (found.length > 0) throw new Error(`append to ${stream}: some event ids are already stored, others are not`);
        throw new WrongExpectedRevisionError(stream, expected, head === -1 ? 'no_stream' : head);
      }
      await options.alongside?.(trx);
      return { nextRevision: head + events.length, duplicate: false };
    });
    if (!result.duplicate && events.length > 0) {
      let recent = this.recent.get(stream);
      if (!recent) this.recent.set(stream, (recent = new RecentEvents(stream)));
      recent.add(result.nextRevision - events.length + 1, events);
      this.local.emit(stream);
    }
    return result;
  }

  async readForward(stream: string, from: number, maxCount: number): Promise<StoredEvent[]> {
    const rows = await this.database.db
      .selectFrom(this.events)
      .select(['revision', 'event_id', 'type', 'data'])
      .where('stream', '=', stream)
      .where('revision', '>=', Math.max(0, from))
      .orderBy('revision')
      .limit(maxCount)
      .execute();
    return rows.map((r) => ({ id: r.event_id, stream, revision: Number(r.revision), type: r.type, data: r.data }));
  }

  /** Takes the stream's append lock for the rest of `trx` and reads its head: no append lands until it ends. */
  async lockStream(trx: SqlDatabase['db'], stream: string): Promise<number> {
    const { rows } = await sql<{ head: string | number }>`select ${sql.raw(this.schema)}.lock_head(${stream}) as head`.execute(trx);
    return Number(rows[0]!.head);
  }

  /** The writer's cold decision state, kept in this database so that it is written in the append's transaction. */
  stateTier(stream: string): PostgresStateTier {
    return new PostgresStateTier(this.database.db, this.schema, stream);
  }

  headRevision(stream: string): Promise<number> {
    return this.headIn(this.database.db, stream);
  }

  private async headIn(db: SqlDatabase['db'], stream: string): Promise<number> {
    const row = await db
      .selectFrom(this.events)
      .select((eb) => eb.fn.max('revision').as('head'))
      .where('stream', '=', stream)
      .executeTakeFirst();
    return row?.head === null || row?.head === undefined ? -1 : Number(row.head);
  }

  /** Lowest revision whose stored row was ever updated or deleted, or null. */
  async lowestTamperedRevision(stream: string): Promise<number | null> {
    const row = await this.database.db
      .selectFrom(`${this.schema}.tamper_marks`)
      .select((eb) => eb.fn.min('revision').as('low'))
      .where('stream', '=', stream)
      .executeTakeFirst();
    return row?.low === null || row?.low === undefined ? null : Number(row.low);
  }

  async *subscribe(stream: string, from: number, signal: AbortSignal): AsyncIterable<StoredEvent> {
    await this.ensureListening();
    let next = from;
    while (!signal.aborted) {
      // Registered from before the read until the wait, so an append while the consumer takes the batch still wakes us.
      let woken = false;
      const onAppend = () => (woken = true);
      this.local.on(stream, onAppend);
      try {
        const batch = this.recent.get(stream)?.from(next, 500) ?? (await this.readForward(stream, next, 500));
        for (const event of batch) {
          if (signal.aborted) return;
          yield event;
          next = event.revision + 1;
        }
        if (batch.length === 500 || woken) continue;
      } finally {
        this.local.off(stream, onAppend);
      }
      await waitForWake(this.fallbackPollMs, signal, (wake) => {
        this.local.once(stream, wake);
        return () => this.local.off(stream, wake);
      });
    }
  }

  private ensureListening(): Promise<unknown> {
    this.unlisten ??= this.database.listen(CHANNEL, (payload) => {
      const stream = payload.slice(0, payload.lastIndexOf(':'));
      this.local.emit(stream);
    });
    return this.unlisten;
  }

  async close(): Promise<void> {
    if (this.unlisten) await (await this.unlisten)();
    this.unlisten = undefined;
  }
}

/**
 * The last run of events this process appended to a stream, once committed. A revision is stored once, so a
 * subscriber in this process takes them from here as they are stored; anything else is read from the table.
 */
class RecentEvents {
  private events: StoredEvent[] = [];
  /** The revision of `events[0]`. */
  private first = 0;

  constructor(private readonly stream: string) {}

  add(from: number, appended: NewEvent[]): void {
    // Another writer's events lie between: the run starts again here.
    if (from !== this.first + this.events.length) {
      this.events = [];
      this.first = from;
    }
    appended.forEach((event, i) => this.events.push({ id: event.id.toLowerCase(), stream: this.stream, revision: from + i, type: event.type, data: event.data }));
    if (this.events.length > 2 * RECENT_EVENTS) {
      this.first += this.events.length - RECENT_EVENTS;
      this.events = this.events.slice(-RECENT_EVENTS);
    }
  }

  /** The events from revision `from` on, at most `max`, if the run holds it. */
  from(from: number, max: number): StoredEvent[] | undefined {
    const at = from - this.first;
    return at >= 0 && at < this.events.length ? this.events.slice(at, at + max) : undefined;
  }
}
