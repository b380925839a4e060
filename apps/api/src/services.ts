import type { Kysely } from 'kysely';
import pino, { type Logger } from 'pino';
import { createBus, type Bus } from '@svc/bus';
import { SolanaChain } from '@svc/chain';
import type { Config } from '@svc/config';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import {
  Attestor,
  EsdbEventStore,
  HeadReader,
  LEDGER_STREAM,
  LedgerWriter,
  PostgresEventStore,
  SnapshotStore,
  type EventStore,
} from '@svc/ledger';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { AwardOutbox, DoorbellStore, Vault, loadMasterKey } from '@svc/vault';
import { Metrics } from './metrics';
import { ProjectionWatcher } from './projectionWatcher';
import { readBoard } from './live/board';
import { PulseHub } from './live/pulseHub';
import { LeaderboardCache } from './society/leaderboard';

export interface Services {
  config: Config;
  log: Logger;
  metrics: Metrics;
  database: SqlDatabase;
  store: EventStore;
  /** The stored ledger head, one read shared by concurrent requests (read-your-writes). */
  ledgerHead: HeadReader;
  writer: LedgerWriter<LedgerState, LedgerCommand>;
  attestor: Attestor;
  vault: Vault;
  /** Bounty award payments reserved, signed and sent but not yet on the ledger (private). */
  awardOutbox: AwardOutbox;
  /** Webhook registrations (sealed secrets), their delivery queue and log (private). */
  doorbells: DoorbellStore;
  bus: Bus;
  readModel: { db: Kysely<any>; schema: string };
  projection: ProjectionWatcher;
  /** Set by startServer once it knows which chain this process trades through. */
  chain: SolanaChain;
  leaderboard: LeaderboardCache;
  pulse: PulseHub;
  close(): Promise<void>;
}

export function createLogger(config: Config, name: string): Logger {
  return pino({
    name,
    level: config.logLevel,
    // Keys and secrets never reach a log line, whatever a caller sends.
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.api_key', '*.secret_key', '*.secret', 'api_key', 'secret_key'],
      censor: '[redacted]',
    },
  });
}

/** Opens the event store named by the configuration: EventStoreDB, another PostgreSQL, or the read-model database. */
export async function openEventStore(config: Config, database: SqlDatabase): Promise<{ store: EventStore; extra?: SqlDatabase }> {
  const url = config.eventstoreUrl;
  if (url && /^(esdb|kurrentdb|kurrent|esdb\+discover):\/\//.test(url)) return { store: new EsdbEventStore(url) };
  if (url && /^postgres(ql)?:\/\//.test(url) && url !== config.databaseUrl) {
    const extra = await openDatabase({ url, dataDir: config.dataDir, applicationName: 'svc-eventstore' });
    return { store: await new PostgresEventStore(extra).init(), extra };
  }
  if (url && !/^postgres(ql)?:\/\//.test(url)) throw new Error(`EVENTSTORE_URL must be esdb://... or postgres://..., got ${url}`);
  return { store: await new PostgresEventStore(database).init() };
}

export async function buildServices(config: Config, log: Logger): Promise<Services> {
  const metrics = new Metrics();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, applicationName: 'svc-api' });
  const { store, extra } = await openEventStore(config, database);
  const snapshots = await new SnapshotStore(database).init();
  const writer = new LedgerWriter(store, ledgerModel, {
    snapshots,
    snapshotEvery: config.snapshotEvery,
    log,
    onBatch: (commands, entries) => metrics.ledgerBatch(commands, entries),
  });
  await writer.start();
  const master = loadMasterKey(config.serviceMasterKey, config.dataDir);
  if (master.generatedAt) {
    log.warn({ file: master.generatedAt }, 'SERVICE_MASTER_KEY is unset: generated one into the data directory; back it up, or custody wallets are lost with it');
  }
  const vault = await new Vault(database, master.key).init();
  const awardOutbox = await new AwardOutbox(database).init();
  const doorbells = await new DoorbellStore(database, master.key, config.readModelSchema).init();
  const bus = createBus(config.redisUrl, config.redisPrefix);
  const readModel = { db: database.db, schema: config.readModelSchema };
  const projection = new ProjectionWatcher(bus, database.db, config.readModelSchema);
  const rpcUrl = config.solanaRpcUrl ?? `http://127.0.0.1:${config.localnetPort}`;
  const services: Services = {
    config,
    log,
    metrics,
    database,
    store,
    ledgerHead: new HeadReader(() => store.headRevision(LEDGER_STREAM)),
    writer,
    attestor: new Attestor(store, snapshots),
    vault,
    awardOutbox,
    doorbells,
    bus,
    readModel,
    projection,
    chain: new SolanaChain({ rpcUrl, priceUrl: config.priceUrl ?? (config.solanaRpcUrl ? undefined : rpcUrl) }),
    leaderboard: new LeaderboardCache(database.db, config.readModelSchema, () => services.chain),
    pulse: new PulseHub(bus, () => readBoard(database.db, config.readModelSchema), () => projection.seq),
    async close() {
      await projection.stop().catch(() => undefined);
      await services.pulse.stop().catch(() => undefined);
      await services.chain.close();
      await writer.saveSnapshot().catch((err) => log.warn({ err }, 'final snapshot failed'));
      await bus.close();
      await store.close();
      await extra?.close();
      await database.close();
    },
  };
  return services;
}
