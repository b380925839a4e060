import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { createBus, type Bus } from '@svc/bus';
import { ActionPipeline } from '@svc/actions';
import { DeployLookupTable, SolanaChain, keypairFromSecret, rememberBase58Names, rememberProgramAddresses } from '@svc/chain';
import type { Config } from '@svc/config';
import { BUNDLED_CHAIN_FIELD, type BundledChainIdentity } from '@svc/contracts';
import { isReservedHandle, ledgerModel, type DecisionSeen, type LedgerCommand, type LedgerState } from '@svc/domain';
import {
  Attestor,
  HeadReader,
  LEDGER_STREAM,
  LedgerWriter,
  PostgresEventStore,
  SnapshotStore,
  inMemoryState,
  tieredState,
  type DecisionStateKind,
  type EventStore,
} from '@svc/ledger';
import { entries } from '@svc/projections';
import { Liveness, type SqlDatabase } from '@svc/readmodel';
import { ChainOutbox, DoorbellStore, Keyring, MediaStore, ServiceWallets, Vault, loadMasterKey, previousMasterKeys } from '@svc/vault';
import { buildDecisionStateInWorker } from './stateBuildThread';
import { eventStoreIsSeparate, openStorage } from './storage';

/** What every process of the service works with, built once from the configuration. */
export interface Runtime {
  config: Config;
  log: Logger;
  /** Read models, the vault and the ledger snapshots (PostgreSQL or PGlite). */
  database: SqlDatabase;
  store: EventStore;
  /** The stored ledger head, one read shared by concurrent requests (read-your-writes). */
  ledgerHead: HeadReader;
  /** The one writer of the ledger in this process, its decision state kept at the head. */
  writer: LedgerWriter<LedgerState, LedgerCommand, DecisionSeen>;
  attestor: Attestor;
  vault: Vault;
  /** Every on-chain action: build, sign or hand out, send, confirm, record; its outbox settles what a crash left. */
  pipeline: ActionPipeline;
  /** Webhook registrations (sealed URLs and secrets), their delivery queue and log (private). */
  doorbells: DoorbellStore;
  /** Hosted token images and metadata JSON, addressed by the sha256 of their bytes. */
  media: MediaStore;
  /** The service's own sealed wallets (the treasury) and what it remembers about the chain. */
  serviceWallets: ServiceWallets;
  /** The lookup table that keeps a deploy with a dev buy under the transaction size limit. */
  deployTable: DeployLookupTable;
  bus: Bus;
  readModel: { db: Kysely<any>; schema: string };
  /** Replaced by whoever starts the bundled chain, whose endpoints are known only once it runs. */
  chain: SolanaChain;
  /** The time in ms as the service counts windows by (the faucet's hour); tests move it. */
  clock: () => number;
  /** Calls `listener` after each append with the number of commands and entries it carried (metrics). */
  onLedgerBatch(listener: (commands: number, entries: number) => void): void;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** How this process names itself to PostgreSQL (`application_name`). */
  applicationName?: string;
  /** Ledgers from this many entries without a stored decision state have it built in a worker thread (10,000). */
  buildStateInThreadFrom?: number;
  /** The clock that times how long a reply's secrets are replayed and the faucet's hour (tests move it). */
  clock?: () => number;
}

export function openBus(config: Config, log?: Logger): Bus {
  return createBus(config.redisUrl, config.redisPrefix, log);
}

/**
 * The chain this process trades through: SOLANA_RPC_URL, or else the bundled local chain, at the endpoints
 * it was started on or, by default, on LOCALNET_PORT. The bundled chain also serves the price API.
 */
export function connectChain(config: Config, bundled?: { rpcUrl: string; wsUrl: string }): SolanaChain {
  if (config.solanaRpcUrl) return new SolanaChain({ rpcUrl: config.solanaRpcUrl, priceUrl: config.priceUrl, jupiterUrl: config.jupiterUrl });
  const rpcUrl = bundled?.rpcUrl ?? `http://127.0.0.1:${config.localnetPort}`;
  return new SolanaChain({ rpcUrl, wsUrl: bundled?.wsUrl, priceUrl: config.priceUrl ?? rpcUrl, jupiterUrl: config.jupiterUrl ?? rpcUrl });
}

/** How long start-up waits for SOLANA_RPC_URL to say whether it is the bundled chain. */
const ASK_CHAIN_MS = 3_000;

/**
 * The configuration with PRICE_URL and JUPITER_URL defaulted to SOLANA_RPC_URL when that is a bundled chain, which
 * says so, and what it serves, in its getVersion reply. A chain that does not answer in time leaves them unset.
 */
export async function withBundledChainDefaults(config: Config, log: Logger): Promise<Config> {
  const rpcUrl = config.solanaRpcUrl;
  if (!rpcUrl || (config.priceUrl && config.jupiterUrl)) return config;
  let identity: BundledChainIdentity | undefined;
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getVersion' }),
      signal: AbortSignal.timeout(ASK_CHAIN_MS),
    });
    identity = ((await res.json()) as { result?: Record<string, BundledChainIdentity | undefined> }).result?.[BUNDLED_CHAIN_FIELD];
  } catch (err) {
    log.warn({ err }, 'SOLANA_RPC_URL did not say what chain it is: PRICE_URL and JUPITER_URL stay as configured');
    return config;
  }
  if (!identity) return config;
  const serves = new Set(identity.serves);
  return {
    ...config,
    priceUrl: config.priceUrl ?? (serves.has('price') ? rpcUrl : undefined),
    jupiterUrl: config.jupiterUrl ?? (serves.has('swap') ? rpcUrl.replace(/\/+$/, '') : undefined),
  };
}

/** The service wallet that receives shared creator fees and pays for the service's own chain upkeep. */
export const TREASURY_WALLET = 'treasury';
export const DEPLOY_TABLE_SETTING = 'deploy_lookup_table';

/**
 * The one composition root: configuration -> event store, ledger writer, read database, vault, bus, chain.
 * Its processes serve requests, so their waits on a PostgreSQL server are bounded.
 */
/**
 * Ledgers from this many entries without a stored decision state have it built in a worker thread (a server
 * only: PGlite is in-process); a shorter one is built at start in this thread, which costs less than a thread.
 */
const BUILD_STATE_IN_THREAD_FROM = 10_000;

export async function buildRuntime(configured: Config, log: Logger, options: RuntimeOptions = {}): Promise<Runtime> {
  rememberProgramAddresses();
  rememberBase58Names();
  const config = await withBundledChainDefaults(configured, log);
  const storage = await openStorage(config, options.applicationName ?? 'svc', { serving: true });
  const { database, store } = storage;
  const batchListeners: Array<(commands: number, entries: number) => void> = [];
  let writer: LedgerWriter<LedgerState, LedgerCommand, DecisionSeen>;
  let snapshots: SnapshotStore;
  let vault: Vault;
  let chainOutbox: ChainOutbox;
  let doorbells: DoorbellStore;
  let media: MediaStore;
  let serviceWallets: ServiceWallets;
  let liveness: Liveness | undefined;
  try {
    snapshots = await new SnapshotStore(database).init();
    // With PostgreSQL the decision state lives in the event store's database, written by every append;
    // EventStoreDB has no transaction to share, so its writer keeps the whole state and snapshots it.
    let decisionState: DecisionStateKind<LedgerState>;
    if (store instanceof PostgresEventStore) {
      const tier = store.stateTier(LEDGER_STREAM);
      const server = store.scanSource();
      if (server && !(await tier.head(ledgerModel.snapshotVersion)) && (await store.headRevision(LEDGER_STREAM)) + 1 >= (options.buildStateInThreadFrom ?? BUILD_STATE_IN_THREAD_FROM)) {
        log.info('no decision state stored for this ledger: building it once, in a worker thread');
        const built = await buildDecisionStateInWorker({ url: server.url, dataDir: config.dataDir, hotKeys: config.stateHotKeys });
        log.info({ seq: built.seq }, 'decision state built');
      }
      decisionState = tieredState({ tier, hotKeys: config.stateHotKeys, lockStream: (trx) => store.lockStream(trx, LEDGER_STREAM) });
    } else {
      decisionState = inMemoryState({ snapshots, snapshotEvery: config.snapshotEvery });
    }
    writer = new LedgerWriter(store, ledgerModel, {
      state: decisionState,
      log,
      onBatch: (commands, entries) => {
        for (const listener of batchListeners) listener(commands, entries);
      },
    });
    await writer.start();
    const master = loadMasterKey(config.serviceMasterKey, config.dataDir);
    if (master.generatedAt) {
      log.warn({ file: master.generatedAt }, 'SERVICE_MASTER_KEY is unset: generated one into the data directory; back it up, or custody wallets are lost with it');
    }
    liveness = await Liveness.start(database, {
      applicationName: options.applicationName ?? 'svc',
      onLost: (err) => log.warn({ err }, 'the liveness connection to the database broke: reconnecting; meanwhile other processes may take over this one\'s work'),
    });
    const keys = new Keyring(master.key, previousMasterKeys(config.serviceMasterKeyOld));
    vault = await new Vault(database, keys, 'vault', { liveness, idempotency: options.clock ? { now: options.clock } : {} }).init();
    chainOutbox = await new ChainOutbox(database, 'vault', liveness).init();
    doorbells = await new DoorbellStore(database, keys, entries.inSchema(config.readModelSchema)).init();
    media = await new MediaStore(database).init();
    serviceWallets = await new ServiceWallets(database, keys).init();
  } catch (error) {
    await liveness?.stop();
    await storage.close().catch(() => undefined);
    throw error;
  }
  const bus = openBus(config, log);
  // The treasury's key is kept once, as a service wallet: @treasury's actions are signed with it.
  const treasurySecret = async (agentId: string): Promise<Uint8Array | undefined> => {
    const citizen = await writer.read((state) => state.citizens.byId.get(agentId));
    if (!citizen || citizen.custody !== 'service' || !isReservedHandle(citizen.handle)) return undefined;
    const treasury = await serviceWallets.wallet(TREASURY_WALLET);
    return treasury.publicKey === citizen.wallet ? treasury.secretKey : undefined;
  };
  let closing: Promise<void> | undefined;
  const runtime: Runtime = {
    config,
    log,
    database,
    store,
    ledgerHead: new HeadReader(() => store.headRevision(LEDGER_STREAM)),
    writer,
    attestor: new Attestor(store, snapshots, { log }),
    vault,
    pipeline: new ActionPipeline({
      chain: () => runtime.chain,
      outbox: chainOutbox,
      writer,
      store,
      walletSecret: async (agentId) => (await vault.walletSecret(agentId)) ?? (await treasurySecret(agentId)),
      log,
      clock: options.clock ?? Date.now,
      // The outbox is in the read database: its row closes in the append's own transaction only when the ledger is there too.
      closeWithRecord: !eventStoreIsSeparate(config),
    }),
    doorbells,
    media,
    serviceWallets,
    deployTable: new DeployLookupTable({
      connection: () => runtime.chain.connection,
      payer: async () => keypairFromSecret((await serviceWallets.wallet(TREASURY_WALLET)).secretKey),
      load: () => serviceWallets.setting(DEPLOY_TABLE_SETTING),
      save: (address) => serviceWallets.setSetting(DEPLOY_TABLE_SETTING, address),
    }),
    bus,
    readModel: { db: database.db, schema: config.readModelSchema },
    chain: connectChain(config),
    clock: options.clock ?? Date.now,
    onLedgerBatch(listener) {
      batchListeners.push(listener);
    },
    close() {
      closing ??= (async () => {
        runtime.pipeline.close();
        await runtime.chain.close();
        await writer.saveSnapshot().catch((err) => log.warn({ err }, 'final snapshot failed'));
        await bus.close();
        await liveness!.stop();
        await storage.close();
      })();
      return closing;
    },
  };
  return runtime;
}
