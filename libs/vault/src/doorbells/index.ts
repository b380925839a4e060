import type { SqlDatabase } from '@svc/readmodel';
import { migrate } from '@svc/readmodel';
import { DeliveryLog, type DeliveryLogItem, type ReplayOutcome } from './deliveryLog';
import { DoorbellFanOut, type FanOutPass } from './fanOut';
import type { ProjectedEntries } from './projectedEntries';
import { DeliveryQueue, type AttemptOutcome, type Backoff, type ClaimedDelivery, type RecordedOutcome } from './queue';
import { DoorbellRegistry, type Doorbell, type DoorbellRegistration, type RegistrationOutcome } from './registry';
import { DoorbellTables, doorbellMigrations, type DeliveryStatus } from './schema';
import { DoorbellSeals } from './seals';
import type { Keyring } from '../keyring';

export { RINGING_KINDS, type FanOutPass } from './fanOut';
export { MAX_TRIES, MUTE_AFTER_FAILURES, type AttemptOutcome, type Backoff, type ClaimedDelivery, type RecordedOutcome } from './queue';
export type { DeliveredEntry, EntryKind, ProjectedEntries } from './projectedEntries';
export type { DeliveryAttempt, DeliveryLogItem, ReplayOutcome } from './deliveryLog';
export type { Doorbell, DoorbellRegistration, RegistrationOutcome } from './registry';
export { doorbellMigrations, type DeliveryStatus, type DoorbellSigning } from './schema';

/**
 * Doorbells (webhooks), private to the service, in four parts over one set of tables: the registry
 * (sealed URLs and secrets), the fan-out from the ledger, the delivery queue, and the delivery log with
 * replay. This only opens them together, migrated and with older rows sealed, and says which part answers.
 */
export class DoorbellStore {
  private readonly tables: DoorbellTables;
  private readonly registry: DoorbellRegistry;
  private readonly fanout: DoorbellFanOut;
  private readonly queue: DeliveryQueue;
  private readonly log: DeliveryLog;

  constructor(
    private readonly database: SqlDatabase,
    masterKey: Buffer | Keyring,
    /** The ledger as the projector holds it: `entries.inSchema(readModelSchema)` from projections/. */
    entries: ProjectedEntries,
    schema = 'vault',
  ) {
    const { db } = database;
    const seals = new DoorbellSeals(masterKey);
    this.tables = new DoorbellTables(schema);
    this.registry = new DoorbellRegistry(db, this.tables, seals);
    this.fanout = new DoorbellFanOut(db, this.tables, entries);
    this.queue = new DeliveryQueue(db, this.tables, seals, entries);
    this.log = new DeliveryLog(db, this.tables, entries);
  }

  async init(): Promise<this> {
    await migrate(this.database.db, this.tables.schema, doorbellMigrations);
    await this.registry.sealPlaintextUrls();
    return this;
  }

  register(input: DoorbellRegistration): Promise<RegistrationOutcome> {
    return this.registry.register(input);
  }

  list(agentId: string): Promise<Doorbell[]> {
    return this.registry.list(agentId);
  }

  get(doorbellId: string): Promise<Doorbell | undefined> {
    return this.registry.get(doorbellId);
  }

  remove(agentId: string, by: { id: string } | { url: string }): Promise<{ id: string; url: string } | undefined> {
    return this.registry.remove(agentId, by);
  }

  fanOut(limit: number): Promise<FanOutPass> {
    return this.fanout.run(limit);
  }

  fanoutPosition(): Promise<number> {
    return this.fanout.position();
  }

  claimDue(max: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    return this.queue.claimDue(max, leaseMs);
  }

  recordAttempt(delivery: ClaimedDelivery, outcome: AttemptOutcome, backoff: Backoff): Promise<RecordedOutcome> {
    return this.queue.recordAttempt(delivery, outcome, backoff);
  }

  release(delivery: ClaimedDelivery, afterMs?: number): Promise<void> {
    return this.queue.release(delivery, afterMs);
  }

  msUntilNextDue(): Promise<number | undefined> {
    return this.queue.msUntilNextDue();
  }

  deliveries(agentId: string, options: { doorbellId?: string; status?: DeliveryStatus; limit: number; before?: string }): Promise<{ items: DeliveryLogItem[]; nextBefore: string | null }> {
    return this.log.deliveries(agentId, options);
  }

  replayDelivery(agentId: string, deliveryId: string, cap: number): Promise<ReplayOutcome> {
    return this.log.replayDelivery(agentId, deliveryId, cap);
  }

  replayAfter(agentId: string, doorbellId: string, afterSeq: number, cap: number): Promise<ReplayOutcome> {
    return this.log.replayAfter(agentId, doorbellId, afterSeq, cap);
  }
}
