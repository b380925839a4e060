import { createHmac, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { monotonicFactory } from 'ulid';
import { execAll, liftTimeouts, migrate, quoteIdent, type Migration, type SqlDatabase } from '@svc/readmodel';
import { deriveKey, seal, unseal } from './crypto';

const ulid = monotonicFactory();

/**
 * Consecutive failed attempts of a doorbell after which it is muted (the spec's "muted after 10 failures").
 * A doorbell has one send in flight at a time and pauses for a growing backoff after each failure, so
 * these ten span a sustained outage, not one burst.
 */
export const MUTE_AFTER_FAILURES = 10;
/** Attempts one delivery gets before it is given up as `failed` (a replay queues it again). */
export const MAX_TRIES = 10;
/** The ledger kinds a doorbell can ring for. */
export const RINGING_KINDS: readonly string[] = ['post', 'action', 'bounty', 'buyback'];

const FANOUT = 'main';
/** Delivery rows one fan-out transaction may write: fewer entries per pass as doorbells grow in number. */
const FANOUT_ROW_BUDGET = 20_000;
/** Plaintext URLs sealed per transaction when init finds doorbells registered before URLs were sealed. */
const URL_SEAL_BATCH = 500;

/**
 * In order. A migration never changes once shipped, so a prefix of this list is the schema an older
 * release left behind.
 */
export const doorbellMigrations: readonly Migration[] = [
  {
    name: 'doorbells_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.doorbells (
           id text primary key,
           agent_id text not null,
           url text not null,
           kinds text not null,
           secret_sealed text,
           muted boolean not null default false,
           muted_at bigint,
           failures integer not null default 0,
           after_seq bigint not null,
           created_at bigint not null,
           updated_at bigint not null,
           unique (agent_id, url))`,
        `create table ${schema}.doorbell_deliveries (
           id text primary key,
           doorbell_id text not null references ${schema}.doorbells (id) on delete cascade,
           agent_id text not null,
           seq bigint not null,
           kind text not null,
           status text not null check (status in ('pending', 'delivered', 'failed', 'skipped')),
           attempts integer not null default 0,
           tries integer not null default 0,
           due_at timestamptz not null default now(),
           claim_id text,
           last_http_status integer,
           last_error text,
           created_at bigint not null,
           updated_at bigint not null,
           delivered_at bigint,
           unique (doorbell_id, seq))`,
        `create index doorbell_deliveries_due on ${schema}.doorbell_deliveries (due_at) where status = 'pending'`,
        `create index doorbell_deliveries_owner on ${schema}.doorbell_deliveries (agent_id, seq desc, id desc)`,
        `create table ${schema}.doorbell_attempts (
           delivery_id text not null references ${schema}.doorbell_deliveries (id) on delete cascade,
           n integer not null,
           started_at bigint not null,
           duration_ms integer not null,
           http_status integer,
           error text,
           ok boolean not null,
           primary key (delivery_id, n))`,
        `create table ${schema}.doorbell_fanout (name text primary key, seq bigint not null)`,
        `insert into ${schema}.doorbell_fanout (name, seq) values ('${FANOUT}', -1)`,
      ]),
  },
  {
    // A doorbell's own queue: one send in flight (claim_id, leased until next_send_at), and after a
    // failure no send before next_send_at. Fan-out writes its rows in SQL, so ids are made there too.
    name: 'doorbells_002',
    up: (db, schema) =>
      execAll(db, [
        `alter table ${schema}.doorbells add column next_send_at timestamptz not null default now(), add column claim_id text`,
        `create index doorbell_deliveries_queue on ${schema}.doorbell_deliveries (doorbell_id, due_at) where status = 'pending'`,
        `drop index if exists ${schema}.doorbell_deliveries_due`,
        `create function ${schema}.doorbell_delivery_id() returns text language sql volatile as $fn$
           select 'dlv_' || string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ',
                    1 + case when i < 10 then ((ms >> (45 - 5 * i)) & 31)::int else floor(random() * 32)::int end, 1), '' order by i)
             from (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) clock, generate_series(0, 25) as i
         $fn$`,
      ]),
  },
  {
    // URLs often carry a token in their query: sealed like the secret from here on, and found by a keyed
    // hash (a bare hash of a guessable URL would confirm a guess). Rows written before are sealed by
    // DoorbellStore.init, which holds the key, and which then drops `url`.
    name: 'doorbells_003',
    up: (db, schema) =>
      execAll(db, [
        `alter table ${schema}.doorbells add column url_sealed text, add column url_hash text, alter column url drop not null`,
        `alter table ${schema}.doorbells drop constraint doorbells_agent_id_url_key`,
        `create unique index doorbells_agent_url_hash on ${schema}.doorbells (agent_id, url_hash)`,
      ]),
  },
];

export interface Doorbell {
  id: string;
  agentId: string;
  /** Unsealed: for its owner's eyes and the delivery only. */
  url: string;
  kinds: string[];
  hasSecret: boolean;
  muted: boolean;
  failures: number;
  createdAt: number;
  /** Ledger entries with a larger seq ring it: it was registered after this one. */
  afterSeq: number;
}

export interface DoorbellRegistration {
  agentId: string;
  /** Already checked and normalized by the caller. */
  url: string;
  kinds: string[];
  secret?: string;
  /** The ledger head when the request arrived (`store.headRevision('ledger')`). */
  ledgerHead: number;
  /** How many doorbells one citizen may hold. */
  limit: number;
}

export type RegistrationOutcome = { ok: true; doorbell: Doorbell; created: boolean } | { ok: false; limit: number };

/** The ledger entry a delivery carries, as stored in the read model (`data` included). */
export interface DeliveredEntry {
  seq: number;
  type: string;
  at: number;
  actor: string;
  data: Record<string, unknown>;
  hash: string;
}

/** A delivery one worker holds until it records the outcome (or its lease runs out). */
export interface ClaimedDelivery {
  id: string;
  claimId: string;
  doorbellId: string;
  /** Unsealed; empty when it could not be (then `sealError`). */
  url: string;
  /** The HMAC key, unsealed; `sealError` when it could not be (then nothing is sent unsigned). */
  secret?: Buffer;
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

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'skipped';

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

const ATTEMPTS_SHOWN = 20;

/**
 * Doorbells (webhooks) and their delivery log, private to the service: registrations with sealed URLs
 * and secrets, one delivery row per (doorbell, ledger seq), and one row per attempt. The fan-out
 * checkpoint lives here too, so several worker processes share one position in the ledger.
 */
export class DoorbellStore {
  /** Keys the URL hashes: apart from the sealing key, so one never stands in for the other. */
  private readonly urlHashKey: Buffer;

  constructor(
    private readonly database: SqlDatabase,
    private readonly masterKey: Buffer,
    /** Where the projector keeps `entries` (the ledger as rows). */
    private readonly readModelSchema: string,
    private readonly schema = 'vault',
  ) {
    this.urlHashKey = deriveKey(masterKey, 'doorbell-url-hash');
  }

  async init(): Promise<this> {
    await migrate(this.database.db, this.schema, doorbellMigrations);
    await this.sealPlaintextUrls();
    return this;
  }

  /**
   * Seals the URLs of doorbells registered before URLs were sealed, a batch per transaction, then drops the
   * plaintext column. Processes that start at once take turns batch by batch, and a start that stopped
   * half-way is taken up where it was by the next one. Once the column is gone this is one lookup.
   */
  private async sealPlaintextUrls(): Promise<void> {
    for (let done = false; !done; ) {
      done = await this.db.transaction().execute(async (trx) => {
        await liftTimeouts(trx);
        await sql`select pg_advisory_xact_lock(hashtext(${`doorbell-urls:${this.schema}`}))`.execute(trx);
        const column = await sql`
          select 1 from information_schema.columns where table_schema = ${this.schema} and table_name = 'doorbells' and column_name = 'url'`.execute(trx);
        if (column.rows.length === 0) return true;
        const plain = await sql<{ id: string; agent_id: string; url: string }>`
          select id, agent_id, url from ${this.raw('doorbells')} where url is not null order by id limit ${URL_SEAL_BATCH}`.execute(trx);
        if (plain.rows.length === 0) {
          await sql`alter table ${this.raw('doorbells')} alter column url_sealed set not null, alter column url_hash set not null, drop column url`.execute(trx);
          return true;
        }
        await sql`
          update ${this.raw('doorbells')} d set url_sealed = s.sealed, url_hash = s.hash, url = null
            from unnest(${plain.rows.map((r) => r.id)}::text[], ${plain.rows.map((r) => this.sealUrl(r.id, r.url))}::text[],
                        ${plain.rows.map((r) => this.urlHash(r.agent_id, r.url))}::text[]) as s(id, sealed, hash)
           where d.id = s.id`.execute(trx);
        return false;
      });
    }
  }

  /** Finds a citizen's doorbell by URL without storing the URL; keyed per citizen, so equal URLs of two citizens do not match. */
  private urlHash(agentId: string, url: string): string {
    return createHmac('sha256', this.urlHashKey).update(`${agentId}\n${url}`, 'utf8').digest('hex');
  }

  private sealUrl(doorbellId: string, url: string): string {
    return seal(this.masterKey, Buffer.from(url, 'utf8'), `doorbell-url:${doorbellId}`);
  }

  private unsealUrl(doorbellId: string, sealed: string): string {
    return unseal(this.masterKey, sealed, `doorbell-url:${doorbellId}`).toString('utf8');
  }

  private toDoorbell(row: Record<string, any>): Doorbell {
    return {
      id: row.id,
      agentId: row.agent_id,
      url: this.unsealUrl(row.id, row.url_sealed),
      kinds: String(row.kinds).split(','),
      hasSecret: row.secret_sealed !== null && row.secret_sealed !== undefined,
      muted: Boolean(row.muted),
      failures: Number(row.failures),
      createdAt: Number(row.created_at),
      afterSeq: Number(row.after_seq),
    };
  }

  private get db(): Kysely<any> {
    return this.database.db;
  }

  private t(name: 'doorbells' | 'doorbell_deliveries' | 'doorbell_attempts' | 'doorbell_fanout'): string {
    return `${this.schema}.${name}`;
  }

  private raw(name: 'doorbells' | 'doorbell_deliveries' | 'doorbell_attempts' | 'doorbell_fanout') {
    return sql.raw(`${quoteIdent(this.schema)}.${name}`);
  }

  private get entries() {
    return sql.raw(`${quoteIdent(this.readModelSchema)}.entries`);
  }

  /**
   * Registers a URL, or updates the caller's registration of the same URL: new kinds and secret, failures
   * and backoff reset, unmuted. A per-citizen lock holds the limit under concurrent registrations; reading
   * the fan-out position under a share lock means the new doorbell rings for every entry the fan-out has
   * not passed.
   */
  async register(input: DoorbellRegistration): Promise<RegistrationOutcome> {
    return this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`doorbells:${input.agentId}`}))`.execute(trx);
      const fanout = await sql<{ seq: number }>`select seq from ${this.raw('doorbell_fanout')} where name = ${FANOUT} for share`.execute(trx);
      const afterSeq = Math.max(input.ledgerHead, Number(fanout.rows[0]?.seq ?? -1));
      const now = Date.now();
      const existing = await trx
        .selectFrom(this.t('doorbells'))
        .select('id')
        .where('agent_id', '=', input.agentId)
        .where('url_hash', '=', this.urlHash(input.agentId, input.url))
        .executeTakeFirst();
      if (existing) {
        const row = await trx
          .updateTable(this.t('doorbells'))
          .set({
            kinds: input.kinds.join(','),
            secret_sealed: this.sealSecret(existing.id, input.secret),
            failures: 0,
            muted: false,
            muted_at: null,
            // The pause a failure left goes too; a send in flight keeps its lease (one at a time).
            next_send_at: sql`case when claim_id is null then now() else next_send_at end`,
            updated_at: now,
          })
          .where('id', '=', existing.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return { ok: true as const, created: false, doorbell: this.toDoorbell(row) };
      }
      const held = await trx
        .selectFrom(this.t('doorbells'))
        .select((eb) => eb.fn.countAll().as('n'))
        .where('agent_id', '=', input.agentId)
        .executeTakeFirst();
      if (Number(held?.n ?? 0) >= input.limit) return { ok: false as const, limit: input.limit };
      const id = `door_${ulid()}`;
      const row = await trx
        .insertInto(this.t('doorbells'))
        .values({
          id,
          agent_id: input.agentId,
          url_sealed: this.sealUrl(id, input.url),
          url_hash: this.urlHash(input.agentId, input.url),
          kinds: input.kinds.join(','),
          secret_sealed: this.sealSecret(id, input.secret),
          after_seq: afterSeq,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { ok: true as const, created: true, doorbell: this.toDoorbell(row) };
    });
  }

  private sealSecret(doorbellId: string, secret: string | undefined): string | null {
    return secret === undefined ? null : seal(this.masterKey, Buffer.from(secret, 'utf8'), `doorbell:${doorbellId}`);
  }

  async list(agentId: string): Promise<Doorbell[]> {
    const rows = await this.db.selectFrom(this.t('doorbells')).selectAll().where('agent_id', '=', agentId).orderBy('id').execute();
    return rows.map((row) => this.toDoorbell(row));
  }

  async get(doorbellId: string): Promise<Doorbell | undefined> {
    const row = await this.db.selectFrom(this.t('doorbells')).selectAll().where('id', '=', doorbellId).executeTakeFirst();
    return row ? this.toDoorbell(row) : undefined;
  }

  /** Removes the caller's doorbell (and its delivery log) by id or by URL. */
  async remove(agentId: string, by: { id: string } | { url: string }): Promise<{ id: string; url: string } | undefined> {
    // One transaction: a URL that cannot be unsealed leaves the row where it was.
    return this.db.transaction().execute(async (trx) => {
      let query = trx.deleteFrom(this.t('doorbells')).where('agent_id', '=', agentId);
      query = 'id' in by ? query.where('id', '=', by.id) : query.where('url_hash', '=', this.urlHash(agentId, by.url));
      const row = await query.returning(['id', 'url_sealed']).executeTakeFirst();
      return row ? { id: row.id as string, url: this.unsealUrl(row.id as string, row.url_sealed as string) } : undefined;
    });
  }

  /**
   * Queues a delivery for every active doorbell that rings for each entry after the fan-out position, and
   * moves the position, in one transaction. The rows are made by one INSERT ... SELECT, never in memory,
   * and fewer entries are taken per pass the more doorbells there are, so a pass writes at most about
   * FANOUT_ROW_BUDGET rows. SKIP LOCKED: while another worker fans out, this one does not wait (`locked`).
   * The unique (doorbell, seq) makes a repeated fan-out harmless.
   */
  async fanOut(limit: number): Promise<{ locked: boolean; queued: number; more: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      const position = await sql<{ seq: number }>`select seq from ${this.raw('doorbell_fanout')} where name = ${FANOUT} for update skip locked`.execute(trx);
      if (position.rows.length === 0) return { locked: true, queued: 0, more: false };
      const from = Number(position.rows[0]!.seq);
      const active = await sql<{ n: string | number; first: string | number | null }>`
        select count(*) as n, min(after_seq) as first from ${this.raw('doorbells')} where not muted`.execute(trx);
      const doorbells = Number(active.rows[0]?.n ?? 0);
      if (doorbells === 0) {
        // Nothing can ring: jump to what is projected instead of walking the ledger.
        const head = await sql<{ seq: number | null }>`select max(seq) as seq from ${this.entries}`.execute(trx);
        const to = head.rows[0]?.seq === null || head.rows[0]?.seq === undefined ? from : Number(head.rows[0].seq);
        if (to > from) await this.moveFanout(trx, to);
        return { locked: false, queued: 0, more: false };
      }
      // No doorbell rings for an entry at or below every doorbell's registration point, and every later
      // registration starts at or above this position: skip straight there.
      const start = Math.max(from, Number(active.rows[0]!.first));
      const take = Math.max(1, Math.min(limit, Math.floor(FANOUT_ROW_BUDGET / doorbells)));
      const now = Date.now();
      const pass = await sql<{ entries: string | number; last: string | number | null; queued: string | number }>`
        with batch as (
          select seq, kind from ${this.entries} where seq > ${start} order by seq limit ${take}
        ), queued as (
          insert into ${this.raw('doorbell_deliveries')} (id, doorbell_id, agent_id, seq, kind, status, created_at, updated_at)
          select ${sql.raw(`${quoteIdent(this.schema)}.doorbell_delivery_id()`)}, b.id, b.agent_id, e.seq, e.kind, 'pending', ${now}::bigint, ${now}::bigint
            from batch e
            join ${this.raw('doorbells')} b on not b.muted and e.seq > b.after_seq and e.kind = any(string_to_array(b.kinds, ','))
           where e.kind in (${sql.join(RINGING_KINDS)})
          on conflict (doorbell_id, seq) do nothing
          returning 1
        )
        select (select count(*) from batch) as entries, (select max(seq) from batch) as last, (select count(*) from queued) as queued`.execute(trx);
      const row = pass.rows[0]!;
      if (Number(row.entries) === 0) {
        if (start > from) await this.moveFanout(trx, start);
        return { locked: false, queued: 0, more: false };
      }
      await this.moveFanout(trx, Number(row.last));
      return { locked: false, queued: Number(row.queued), more: Number(row.entries) === take };
    });
  }

  private async moveFanout(trx: Kysely<any>, seq: number): Promise<void> {
    await trx.updateTable(this.t('doorbell_fanout')).set({ seq }).where('name', '=', FANOUT).execute();
  }

  async fanoutPosition(): Promise<number> {
    const row = await this.db.selectFrom(this.t('doorbell_fanout')).select('seq').where('name', '=', FANOUT).executeTakeFirst();
    return Number(row?.seq ?? -1);
  }

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
        select b.id from ${this.raw('doorbells')} b
          join lateral (
            select d.due_at from ${this.raw('doorbell_deliveries')} d
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
            select d.id, d.doorbell_id from ${this.raw('doorbell_deliveries')} d
             where d.doorbell_id = b.id and d.status = 'pending' and d.due_at <= now()
             order by d.seq limit 1
             for update skip locked) first on true`.execute(trx);
      if (picked.rows.length === 0) return [];
      await trx
        .updateTable(this.t('doorbells'))
        .set({ claim_id: claimId, next_send_at: sql`now() + ${lease} * interval '1 millisecond'` })
        .where(
          'id',
          'in',
          picked.rows.map((r) => r.doorbell_id),
        )
        .execute();
      return trx
        .updateTable(this.t('doorbell_deliveries'))
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
    const doorbells = await this.db.selectFrom(this.t('doorbells')).select(['id', 'url_sealed', 'secret_sealed']).where('id', 'in', doorbellIds).execute();
    const byId = new Map(doorbells.map((d) => [d.id as string, d]));
    const seqs = [...new Set(claimed.map((c) => Number(c.seq)))];
    const bodies = await sql<{ seq: number; body: string }>`select seq, body from ${this.entries} where seq in (${sql.join(seqs)})`.execute(this.db);
    const entryBySeq = new Map(bodies.rows.map((r) => [Number(r.seq), toDeliveredEntry(r.body)]));
    const out: ClaimedDelivery[] = [];
    for (const row of claimed) {
      const doorbell = byId.get(row.doorbell_id as string);
      if (!doorbell) continue; // removed meanwhile: its rows go with it
      const delivery: ClaimedDelivery = {
        id: row.id as string,
        claimId,
        doorbellId: doorbell.id as string,
        url: '',
        seq: Number(row.seq),
        kind: row.kind as string,
        attempt: Number(row.attempts),
        tries: Number(row.tries),
        entry: entryBySeq.get(Number(row.seq)),
      };
      try {
        delivery.url = this.unsealUrl(doorbell.id as string, doorbell.url_sealed as string);
      } catch {
        delivery.sealError = 'the doorbell URL cannot be unsealed (was SERVICE_MASTER_KEY changed?); remove the doorbell and register the URL again';
      }
      if (doorbell.secret_sealed && !delivery.sealError) {
        try {
          delivery.secret = unseal(this.masterKey, doorbell.secret_sealed as string, `doorbell:${doorbell.id}`);
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
      const owner = await trx.selectFrom(this.t('doorbells')).select(['claim_id', 'failures', 'muted']).where('id', '=', delivery.doorbellId).forUpdate().executeTakeFirst();
      const exists = owner && (await trx.selectFrom(this.t('doorbell_deliveries')).select('id').where('id', '=', delivery.id).forUpdate().executeTakeFirst());
      if (!owner || !exists) return { muted: false, status: undefined, failures: 0 }; // the doorbell was removed
      await trx
        .insertInto(this.t('doorbell_attempts'))
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
        await trx.updateTable(this.t('doorbells')).set({ failures: 0, claim_id: null, next_send_at: sql`now()` }).where('id', '=', delivery.doorbellId).execute();
        const moved = await trx
          .updateTable(this.t('doorbell_deliveries'))
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
        .updateTable(this.t('doorbells'))
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
        .updateTable(this.t('doorbell_deliveries'))
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
          .updateTable(this.t('doorbell_deliveries'))
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
        .updateTable(this.t('doorbells'))
        .set({ claim_id: null, next_send_at: sql`now() + ${after} * interval '1 millisecond'` })
        .where('id', '=', delivery.doorbellId)
        .where('claim_id', '=', delivery.claimId)
        .execute();
      await trx
        .updateTable(this.t('doorbell_deliveries'))
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
        from ${this.raw('doorbells')} b
        join lateral (
          select d.due_at from ${this.raw('doorbell_deliveries')} d
           where d.doorbell_id = b.id and d.status = 'pending'
           order by d.due_at limit 1) oldest on true
       where not b.muted`.execute(this.db);
    const ms = result.rows[0]?.ms;
    return ms === null || ms === undefined ? undefined : Math.max(0, Number(ms));
  }

  /** How many deliveries of this doorbell are waiting (queued, retrying or being sent). */
  private async pendingCount(trx: Kysely<any>, doorbellId: string): Promise<number> {
    const row = await trx
      .selectFrom(this.t('doorbell_deliveries'))
      .select((eb) => eb.fn.countAll().as('n'))
      .where('doorbell_id', '=', doorbellId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** The caller's deliveries, highest seq first, each with its latest attempts. */
  async deliveries(
    agentId: string,
    options: { doorbellId?: string; status?: DeliveryStatus; limit: number; before?: string },
  ): Promise<{ items: DeliveryLogItem[]; nextBefore: string | null }> {
    let query = this.db
      .selectFrom(`${this.t('doorbell_deliveries')} as d`)
      .innerJoin(`${this.t('doorbells')} as b`, 'b.id', 'd.doorbell_id')
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
        sql<boolean>`(d.seq, d.id) < (select c.seq, c.id from ${this.raw('doorbell_deliveries')} c where c.id = ${options.before} and c.agent_id = ${agentId})`,
      );
    }
    const rows = await query.execute();
    const ids = rows.map((r) => r.id as string);
    const attempts = ids.length
      ? await sql<Record<string, any>>`
          select delivery_id, n, started_at, duration_ms, http_status, error, ok from (
            select a.*, row_number() over (partition by a.delivery_id order by a.n desc) as recent
              from ${this.raw('doorbell_attempts')} a where a.delivery_id in (${sql.join(ids)})) shown
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
        .selectFrom(`${this.t('doorbell_deliveries')} as d`)
        .innerJoin(`${this.t('doorbells')} as b`, 'b.id', 'd.doorbell_id')
        .select(['d.id', 'd.doorbell_id'])
        .where('d.id', '=', deliveryId)
        .where('d.agent_id', '=', agentId)
        .executeTakeFirst();
      if (!found) return { ok: false as const, reason: 'not_found' as const };
      // Locked like a claim takes it, so the count below holds until this commits.
      const doorbell = await trx.selectFrom(this.t('doorbells')).select('muted').where('id', '=', found.doorbell_id).forUpdate().executeTakeFirst();
      const delivery = await trx.selectFrom(this.t('doorbell_deliveries')).select('status').where('id', '=', deliveryId).forUpdate().executeTakeFirst();
      if (!doorbell || !delivery) return { ok: false as const, reason: 'not_found' as const };
      if (doorbell.muted) return { ok: false as const, reason: 'muted' as const };
      if (delivery.status !== 'pending') {
        const pending = await this.pendingCount(trx, found.doorbell_id as string);
        if (pending >= cap) return { ok: false as const, reason: 'busy' as const, pending, cap };
      }
      const moved = await trx
        .updateTable(this.t('doorbell_deliveries'))
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
        .selectFrom(this.t('doorbells'))
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
      const entries = await sql<{ seq: number; kind: string }>`
        select seq, kind from ${this.entries} where seq > ${afterSeq} and kind in (${sql.join(kinds)}) order by seq limit ${room}`.execute(trx);
      if (entries.rows.length === 0) return { ok: true as const, requeued: 0, nextAfterSeq: null };
      const now = Date.now();
      const queued = await trx
        .insertInto(this.t('doorbell_deliveries'))
        .values(
          entries.rows.map((e) => ({
            id: `dlv_${ulid()}`,
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
              eb.or([eb(sql.ref(`${this.t('doorbell_deliveries')}.status`), '<>', 'pending'), eb(sql.ref(`${this.t('doorbell_deliveries')}.claim_id`), 'is', null)]),
            ),
        )
        .returning('id')
        .execute();
      const last = Number(entries.rows[entries.rows.length - 1]!.seq);
      return { ok: true as const, requeued: queued.length, nextAfterSeq: entries.rows.length === room ? last : null };
    });
  }
}

function nullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

function toDeliveredEntry(body: string): DeliveredEntry {
  const entry = JSON.parse(body) as DeliveredEntry;
  return { seq: entry.seq, type: entry.type, at: entry.at, actor: entry.actor, data: entry.data, hash: entry.hash };
}
