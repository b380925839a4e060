import { createHash, createHmac, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import { sql } from 'kysely';
import { ulid } from 'ulid';
import { execAll, holderGone, migrate, OwedWrites, type Liveness, type Migration, type SqlDatabase } from '@svc/readmodel';
import { Keyring } from './keyring';

const migrations: Migration[] = [
  {
    name: 'idempotency_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.idempotency_keys (
           scope text not null,
           key text not null,
           request_hash text not null,
           attempt text not null,
           state text not null check (state in ('running', 'done')),
           lease_until timestamptz not null,
           status integer,
           response text,
           created_at timestamptz not null default now(),
           completed_at timestamptz,
           primary key (scope, key))`,
        `create index idempotency_keys_created on ${schema}.idempotency_keys (created_at)`,
      ]),
  },
  {
    // The live process running the key (see Liveness): once it is gone, a retry takes the key over at once.
    name: 'idempotency_002_holder',
    up: (db, schema) => execAll(db, [`alter table ${schema}.idempotency_keys add column holder integer`]),
  },
  {
    // A reply that carries secrets is kept whole only until secrets_until (ms); `response_without_secrets` replaces it then.
    name: 'idempotency_003_secrets_shown',
    up: (db, schema) =>
      execAll(db, [
        `alter table ${schema}.idempotency_keys add column secrets_until bigint`,
        `alter table ${schema}.idempotency_keys add column response_without_secrets text`,
        `create index idempotency_keys_secrets on ${schema}.idempotency_keys (secrets_until) where secrets_until is not null`,
      ]),
  },
];

const VISIBLE_ASCII_KEY = /^[\x21-\x7e]{1,255}$/;

/** An `Idempotency-Key` value the service accepts: 1-255 visible ASCII characters. */
export function isIdempotencyKey(value: string): boolean {
  return VISIBLE_ASCII_KEY.test(value);
}

/**
 * What "the same request" means for a key: method, path and the RFC 8785 canonical JSON of the body. A body
 * RFC 8785 cannot express (a non-finite number) is refused by validation first; should one get here, it is
 * hashed as JSON.stringify writes it rather than throwing. An HMAC under the idempotency subkey, not a bare hash:
 * a body can hold a short private note, and a bare hash in the database would confirm a guess of it.
 */
export function idempotencyRequestHash(hashKey: Buffer, method: string, path: string, body: unknown): string {
  const request = { method: method.toUpperCase(), path, body: body ?? null };
  let canonical: string | undefined;
  try {
    canonical = canonicalize(request);
  } catch {
    canonical = JSON.stringify(request, (_name, value) => (typeof value === 'number' && !Number.isFinite(value) ? `\u0000${value}` : value));
  }
  return createHmac('sha256', hashKey).update(canonical ?? '', 'utf8').digest('hex');
}

/** A reply exactly as its client saw it. */
export interface StoredResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/**
 * A reply that carries secrets (an API key, a wallet's secret key) is replayed whole only for a prompt retry:
 * after `forMs`, a retry gets `withoutSecrets`, and the whole reply is no longer kept.
 */
export interface SecretsInReply {
  withoutSecrets: Omit<StoredResponse, 'status'>;
  forMs: number;
}

export type IdempotencyBegin =
  /**
   * This caller holds the key and must end with complete or abandon. `resumed`: a dead holder's lease ran out,
   * so the request may have taken effect already. `createdAt`: when the key was first used (ms), the same for
   * every attempt, so that ids made from it are too; `requestHash`: the hash the key was first used with, for the same reason.
   */
  | { kind: 'run'; attempt: string; resumed: boolean; createdAt: number; requestHash: string }
  | ({ kind: 'replay' } & StoredResponse)
  /** The key was first used for another request. */
  | { kind: 'conflict' }
  /** Another caller still holds the key after the wait bound. */
  | { kind: 'busy' };

export interface IdempotencyTuning {
  /** How long a holder that stopped renewing (its process died) keeps a retry out. */
  leaseMs: number;
  /** How long a retry waits for the holder to finish before it answers busy. */
  waitMs: number;
  firstPollMs: number;
  maxPollMs: number;
  /** A holder stops renewing after this long, so a handler that hangs cannot hold its key forever. */
  maxHoldMs: number;
  /** Keys are kept at least this long. */
  keepMs: number;
  /** How often a holder's last word that the database did not take (it was down) is said again. */
  owedRetryMs: number;
  /** The clock that times how long a reply's secrets are replayed (tests move it). */
  now: () => number;
}

/** How often the workers forget keys past keeping and replies past showing their secrets. */
export const IDEMPOTENCY_PURGE_EVERY_MS = 60_000;

export const IDEMPOTENCY_TUNING: IdempotencyTuning = {
  leaseMs: 30_000,
  waitMs: 10_000,
  firstPollMs: 20,
  maxPollMs: 250,
  maxHoldMs: 10 * 60_000,
  keepMs: 24 * 3_600_000,
  owedRetryMs: 250,
  now: () => Date.now(),
};

export interface IdempotencyStoreOptions {
  schema?: string;
  /** This process's liveness: a key held by a process that died is taken over at once, not when its lease ends. */
  liveness?: Liveness;
  tuning?: Partial<IdempotencyTuning>;
}

interface Holding {
  timer: NodeJS.Timeout;
  started: number;
}

/**
 * Retried writes: the first request with a key runs, later ones with the same key and request replay its
 * stored reply. The row is the lock across API processes: it names the holding process, so a retry takes over
 * at once from one that died, and its lease, renewed while the holder runs, bounds one that hangs. Replies are
 * sealed: a registration reply carries secrets, which are replayed only for a prompt retry.
 */
export class IdempotencyStore {
  private readonly tuning: IdempotencyTuning;
  private readonly schema: string;
  private readonly liveness: Liveness | undefined;
  private readonly holding = new Map<string, Holding>();
  /** Retries in this process waiting on a key, woken as soon as its holder here finishes. */
  private readonly waiters = new Map<string, Set<() => void>>();
  /** A key's last word that the database did not take (it was down when the request failed). */
  private readonly owed: OwedWrites;
  /** Key request hashes, apart from the key that seals replies: the current master key's first, then older ones'. */
  private readonly requestHashKeys: Buffer[];
  private readonly keys: Keyring;

  constructor(
    private readonly database: SqlDatabase,
    masterKey: Buffer | Keyring,
    options: IdempotencyStoreOptions = {},
  ) {
    this.schema = options.schema ?? 'vault';
    this.liveness = options.liveness;
    this.tuning = { ...IDEMPOTENCY_TUNING, ...options.tuning };
    this.owed = new OwedWrites(this.tuning.owedRetryMs);
    this.keys = Keyring.of(masterKey);
    this.requestHashKeys = this.keys.subkeys('request-hash');
  }

  /**
   * What `begin` compares a retry with (see idempotencyRequestHash): the hash under the current key, then under the
   * keys before it, so a retry across a master key rotation is still the same request.
   */
  requestHashes(method: string, path: string, body: unknown): string[] {
    return this.requestHashKeys.map((hashKey) => idempotencyRequestHash(hashKey, method, path, body));
  }

  /** Forgets what is past keeping; the workers' loop calls it every IDEMPOTENCY_PURGE_EVERY_MS. */
  async purge(): Promise<{ purged: number; secretsForgotten: number }> {
    const purged = await this.purgeOlderThan(this.tuning.keepMs);
    return { purged, secretsForgotten: await this.forgetShownSecrets() };
  }

  async init(): Promise<this> {
    await migrate(this.database.db, this.schema, migrations);
    return this;
  }

  private get table(): string {
    return `${this.schema}.idempotency_keys`;
  }

  private lease(ms: number) {
    return sql<Date>`now() + ${Math.max(0, Math.round(ms))} * interval '1 millisecond'`;
  }

  async begin(scope: string, key: string, requestHash: string | readonly string[], options: { leaseMs?: number; waitMs?: number } = {}): Promise<IdempotencyBegin> {
    const hashes = typeof requestHash === 'string' ? [requestHash] : requestHash;
    await this.owed.pay();
    const leaseMs = options.leaseMs ?? this.tuning.leaseMs;
    const deadline = Date.now() + (options.waitMs ?? this.tuning.waitMs);
    let pause = this.tuning.firstPollMs;
    for (;;) {
      const attempt = randomUUID();
      const inserted = await this.database.db
        .insertInto(this.table)
        .values({ scope, key, request_hash: hashes[0]!, attempt, holder: this.holder, state: 'running', lease_until: this.lease(leaseMs) })
        .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
        .returning(['attempt', 'created_at'])
        .executeTakeFirst()
        .catch(async (error: unknown) => {
          // The insert may have committed with its reply lost: the key would look held by this live process for the
          // whole lease. Nothing ran under this attempt, so it lets go.
          const letGo = () => this.database.db.deleteFrom(this.table).where('scope', '=', scope).where('key', '=', key).where('attempt', '=', attempt).where('state', '=', 'running').execute();
          await this.owed.sayOrOwe(attempt, letGo).catch(() => undefined);
          throw error;
        });
      if (inserted) return this.hold(scope, key, attempt, leaseMs, false, new Date(inserted.created_at).getTime(), hashes[0]!);

      const row = await this.database.db
        .selectFrom(this.table)
        .select(['request_hash', 'attempt', 'state', 'status', 'response', 'secrets_until', 'response_without_secrets', this.abandoned().as('abandoned')])
        .where('scope', '=', scope)
        .where('key', '=', key)
        .executeTakeFirst();
      // Abandoned between the insert and the read: the key is free again.
      if (!row) continue;
      if (!hashes.includes(row.request_hash)) return { kind: 'conflict' };
      if (row.state === 'done') return { kind: 'replay', ...this.replayOf(scope, key, row) };
      if (row.abandoned) {
        const taken = await this.database.db
          .updateTable(this.table)
          .set({ attempt, holder: this.holder, lease_until: this.lease(leaseMs) })
          .where('scope', '=', scope)
          .where('key', '=', key)
          .where('attempt', '=', row.attempt)
          .where('state', '=', 'running')
          .where(this.abandoned())
          .returning(['attempt', 'created_at'])
          .executeTakeFirst();
        if (taken) return this.hold(scope, key, attempt, leaseMs, true, new Date(taken.created_at).getTime(), row.request_hash);
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) return { kind: 'busy' };
      await this.settledOrAfter(scope, key, Math.min(pause, left));
      pause = Math.min(pause * 2, this.tuning.maxPollMs);
    }
  }

  /** The holding process is gone, or its lease ran out: a retry may take the key over. */
  private abandoned() {
    return sql<boolean>`(lease_until <= now() or ${holderGone('holder')})`;
  }

  private get holder(): number | null {
    return this.liveness?.holder ?? null;
  }

  /**
   * Stores the reply; false when `attempt` no longer holds the key (its holder was judged gone, or its lease ran
   * out, and a retry took over). A reply with `secrets` is replayed whole only for `secrets.forMs`.
   */
  async complete(scope: string, key: string, attempt: string, response: StoredResponse, secrets?: SecretsInReply): Promise<boolean> {
    const sealed = (reply: Omit<StoredResponse, 'status'>) => this.keys.seal('idempotency', Buffer.from(JSON.stringify({ body: reply.body, headers: reply.headers }), 'utf8'), idempotencyContext(scope, key));
    return this.settle(scope, key, attempt, {
      state: 'done',
      status: response.status,
      response: sealed(response),
      completed_at: sql`now()`,
      ...(secrets ? { secrets_until: this.tuning.now() + secrets.forMs, response_without_secrets: sealed(secrets.withoutSecrets) } : {}),
    });
  }

  /** Frees the key so that a retry runs the request again; only the holding attempt may. */
  async abandon(scope: string, key: string, attempt: string): Promise<boolean> {
    return this.settle(scope, key, attempt, 'delete');
  }

  /**
   * Lets the next attempt take the key over at once, as if this one had died: for a failure after which the
   * request may or may not have taken effect. The retry runs again as `resumed`, with the same ids.
   */
  async letGo(scope: string, key: string, attempt: string): Promise<boolean> {
    return this.settle(scope, key, attempt, { lease_until: sql`now()` });
  }

  /** The holding attempt's last word on its key: stop renewing, change the row, wake whoever waits on it. */
  private async settle(scope: string, key: string, attempt: string, change: Record<string, unknown> | 'delete'): Promise<boolean> {
    this.release(attempt);
    const held = (query: any) => query.where('scope', '=', scope).where('key', '=', key).where('attempt', '=', attempt).where('state', '=', 'running');
    const say = async () =>
      change === 'delete'
        ? Number((await held(this.database.db.deleteFrom(this.table)).executeTakeFirst()).numDeletedRows)
        : Number((await held(this.database.db.updateTable(this.table).set(change)).executeTakeFirst()).numUpdatedRows);
    let result = 0;
    await this.owed.sayOrOwe(attempt, async () => {
      result = await say();
      this.wake(scope, key);
    });
    return result === 1;
  }

  /** Forgets keys first used more than `ms` ago, except one whose holder still runs. */
  async purgeOlderThan(ms: number): Promise<number> {
    const result = await this.database.db
      .deleteFrom(this.table)
      .where('created_at', '<', sql<Date>`now() - ${Math.max(0, Math.round(ms))} * interval '1 millisecond'`)
      .where((eb) => eb.or([eb('state', '=', 'done'), eb('lease_until', '<=', sql<Date>`now()`)]))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Drops the whole replies whose secrets were replayed long enough: the rows keep them without. */
  async forgetShownSecrets(): Promise<number> {
    const result = await this.database.db
      .updateTable(this.table)
      .set({ response: sql`response_without_secrets`, response_without_secrets: null, secrets_until: null })
      .where('secrets_until', '<=', this.tuning.now())
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Stops renewing every lease this store holds, as a process that dies would. */
  close(): void {
    for (const attempt of [...this.holding.keys()]) this.release(attempt);
    this.owed.close();
  }

  private replayOf(scope: string, key: string, row: { status: unknown; response: unknown; secrets_until: unknown; response_without_secrets: unknown }): StoredResponse {
    const secretsShown = row.secrets_until !== null && row.secrets_until !== undefined && this.tuning.now() >= Number(row.secrets_until);
    const sealed = (secretsShown ? row.response_without_secrets : row.response) as string;
    const { body, headers } = JSON.parse(this.keys.unseal('idempotency', sealed, idempotencyContext(scope, key)).toString('utf8')) as Omit<StoredResponse, 'status'>;
    return { status: Number(row.status), body, headers };
  }

  private hold(scope: string, key: string, attempt: string, leaseMs: number, resumed: boolean, createdAt: number, requestHash: string): IdempotencyBegin {
    const started = Date.now();
    const timer = setInterval(() => {
      if (Date.now() - started > this.tuning.maxHoldMs) return this.release(attempt);
      this.database.db
        .updateTable(this.table)
        .set({ lease_until: this.lease(leaseMs) })
        .where('scope', '=', scope)
        .where('key', '=', key)
        .where('attempt', '=', attempt)
        .where('state', '=', 'running')
        .executeTakeFirst()
        .then((result) => {
          if (Number(result.numUpdatedRows) !== 1) this.release(attempt);
        })
        // A renewal that fails is retried on the next tick; the lease outlasts two of them.
        .catch(() => undefined);
    }, Math.max(1_000, Math.floor(leaseMs / 3)));
    timer.unref();
    this.holding.set(attempt, { timer, started });
    return { kind: 'run', attempt, resumed, createdAt, requestHash };
  }

  private release(attempt: string): void {
    const holding = this.holding.get(attempt);
    if (!holding) return;
    clearInterval(holding.timer);
    this.holding.delete(attempt);
  }

  private settledOrAfter(scope: string, key: string, ms: number): Promise<void> {
    const id = idempotencyContext(scope, key);
    return new Promise((resolve) => {
      const waiters = this.waiters.get(id) ?? new Set();
      this.waiters.set(id, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiters.get(id) === waiters) this.waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });
  }

  private wake(scope: string, key: string): void {
    for (const done of [...(this.waiters.get(idempotencyContext(scope, key)) ?? [])]) done();
  }

}

/** Binds a sealed reply to its row, so it cannot be replayed under another citizen's key. */
export function idempotencyContext(scope: string, key: string): string {
  return `idempotency:${JSON.stringify([scope, key])}`;
}

/**
 * Ids for the request behind an Idempotency-Key: the same on every attempt of it, so a request retried after
 * its process died proposes the very ids it may already have written, and the ledger shows whether it did.
 * They are ULIDs like any other: the time the key was first used, and a randomness drawn from the key.
 */
export function idempotentIds(scope: string, key: string, requestHash: string, createdAt: number): (prefix: string) => string {
  let n = 0;
  return (prefix) => {
    n += 1;
    const seed = createHash('sha256').update(`${scope}\n${key}\n${requestHash}\n${prefix}\n${n}`).digest();
    let at = 0;
    // ulid draws one number in [0, 1) per character of randomness.
    const prng = () => seed[at++ % seed.length]! / 256;
    return `${prefix}${ulid(createdAt, prng)}`;
  };
}
