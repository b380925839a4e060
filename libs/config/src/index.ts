import path from 'node:path';

/** Every setting of the service, read once from the environment. Unset means the embedded default. */
export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  /** PostgreSQL for read models and the vault; unset = PGlite under dataDir. */
  databaseUrl?: string;
  /** esdb://... = EventStoreDB, postgres://... = PostgreSQL event store; unset = the read-model database. */
  eventstoreUrl?: string;
  /** Redis for the bus and shared rate limits; unset = in-process. */
  redisUrl?: string;
  /** Namespace of this deployment's Redis channels and keys. */
  redisPrefix: string;
  solanaRpcUrl?: string;
  /**
   * Jupiter-compatible price API (`/price/v3`); unset = the bundled chain's own: the one `npm start` runs, or
   * SOLANA_RPC_URL when that chain says it is one (libs/runtime asks its getVersion at start).
   */
  priceUrl?: string;
  /** Jupiter-compatible swap API (`/swap/v1/quote`, `/swap/v1/swap`); unset = the bundled chain's own, like PRICE_URL. */
  jupiterUrl?: string;
  /** Doorbells may call loopback addresses (tests only); private and metadata addresses stay refused. */
  doorbellAllowLoopback: boolean;
  /** Extra CA certificate (PEM file) trusted for doorbell deliveries, e.g. a private CA. */
  doorbellCaFile?: string;
  localnetPort: number;
  /** SOL/USD of the bundled local chain's price API. */
  localnetSolUsd: number;
  /** base64 of 32 bytes; unset = generated once into dataDir. */
  serviceMasterKey?: string;
  /** Master keys before SERVICE_MASTER_KEY, comma-separated, while `npm run rekey` moves what they sealed. */
  serviceMasterKeyOld?: string;
  readModelSchema: string;
  logLevel: string;
  trustProxy: string | number | boolean;
  /** Registrations allowed per IP per hour. */
  registerPerIpPerHour: number;
  /** Requests per key (or per IP when public) per second, sustained. */
  requestsPerSecond: number;
  /** How long a read waits for the projector to reach the ledger head before answering anyway. */
  readYourWritesMs: number;
  /** How long after a reply with secrets (register, rotate) a retry under its Idempotency-Key still gets them. */
  secretReplayMs: number;
  /** How often a waiting read, /pulse?wait= or /ws reads the projection checkpoint while the bus is down. */
  checkpointPollMs: number;
  snapshotEvery: number;
  /** Decision-state keys kept in memory per map when the state is tiered (a PostgreSQL event store). */
  stateHotKeys: number;
  /** How long a serving process waits for a pooled PostgreSQL connection; 0 = no bound. */
  databaseConnectTimeoutMs: number;
  /** statement_timeout of a serving process's PostgreSQL sessions; 0 = the server's own. */
  databaseStatementTimeoutMs: number;
  /** idle_in_transaction_session_timeout of a serving process's PostgreSQL sessions; 0 = the server's own. */
  databaseIdleInTransactionTimeoutMs: number;
  /** How often /attest re-verifies the whole chain from seq 0 in the background; 0 = only when asked. */
  attestFullEveryMs: number;
  projectorBatchSize: number;
  projectorHealthPort: number;
  bodyLimit: string;
  /** How often a process's recovery pass looks for on-chain actions another (dead) process left unsettled. */
  outboxRecoveryMs: number;
  /** How long a buy, sell or quote of a coin between its curve and its pool waits for the pool before 503 graduating. */
  graduationWaitMs: number;
  /** The service token the treasury buys back and burns; unset = the one the embedded start deployed, if any. */
  treasuryTokenMint?: string;
  /** How often the treasury runs a buyback cycle; 0 = never on its own (cycles run only when asked). */
  treasuryCycleMs: number;
  /** SOL the treasury always keeps, for network fees and rent. */
  treasuryReserveSol: number;
  /** A buyback runs only when the treasury holds at least this much SOL above its reserve. */
  treasuryMinBuySol: number;
  /** Slippage of the treasury's buys, in basis points. */
  treasurySlippageBps: number;
  /** Test SOL one citizen may take from POST /api/v1/faucet in any rolling hour. */
  faucetSolPerHour: number;
  /** The ledger head is anchored on Solana once this many entries follow the last anchor; 0 = no anchors at all. */
  anchorEveryEntries: number;
  /** ...or once this long passed since the last anchor, when any entry follows it; 0 = by count only. */
  anchorIntervalMs: number;
  /** How long a loosening of a citizen's spending policy waits before it takes effect (a tightening does not). */
  policyDelayMs: number;
  /** The spending policy a new citizen starts with; unset is no rule. */
  defaultPolicyMaxSolPerTrade?: number;
  defaultPolicyMaxSolPerDay?: number;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got ${JSON.stringify(raw)}`);
  return n;
}

function optionalSol(env: NodeJS.ProcessEnv, name: string): number | undefined {
  if (str(env, name) === undefined) return undefined;
  return within(int(env, name, 0), name, Number.MIN_VALUE, 1e6, 'an amount of SOL');
}

function within(value: number, name: string, min: number, max: number, why: string): number {
  if (value < min || value > max) throw new Error(`${name} must be between ${min === Number.MIN_VALUE ? 0 : min} and ${max} (${why}), got ${value}`);
  return value;
}

function str(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function bool(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = str(env, name);
  if (raw === undefined || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new Error(`${name} must be true or false, got ${JSON.stringify(raw)}`);
}

function trustProxy(raw: string | undefined): string | number | boolean {
  if (raw === undefined) return false;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  const n = Number(raw);
  return Number.isInteger(n) ? n : raw;
}

function base58Key(raw: string | undefined, name: string): string | undefined {
  if (raw !== undefined && !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(raw)) throw new Error(`${name} must be a base58 Solana address, got ${JSON.stringify(raw)}`);
  return raw;
}

function cyclePeriod(ms: number): number {
  if (ms === 0) return 0;
  return within(ms, 'TREASURY_CYCLE_MS', 100, 86_400_000, '0 turns the schedule off; otherwise a period in milliseconds');
}

function databaseTimeout(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  return within(int(env, name, fallback), name, 0, 86_400_000, '0 leaves it unbounded; otherwise milliseconds');
}

function attestPeriod(ms: number): number {
  if (ms === 0) return 0;
  return within(ms, 'ATTEST_FULL_EVERY_MS', 1000, 2_592_000_000, '0 turns the schedule off; otherwise a period in milliseconds');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env, 'PORT', 8080);
  const dataDir = path.resolve(str(env, 'DATA_DIR') ?? './data');
  return {
    port,
    host: str(env, 'HOST') ?? '0.0.0.0',
    publicUrl: (str(env, 'PUBLIC_URL') ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    dataDir,
    databaseUrl: str(env, 'DATABASE_URL'),
    eventstoreUrl: str(env, 'EVENTSTORE_URL'),
    redisUrl: str(env, 'REDIS_URL'),
    redisPrefix: str(env, 'REDIS_PREFIX') ?? 'svc',
    solanaRpcUrl: str(env, 'SOLANA_RPC_URL'),
    priceUrl: str(env, 'PRICE_URL'),
    jupiterUrl: str(env, 'JUPITER_URL')?.replace(/\/+$/, ''),
    doorbellAllowLoopback: bool(env, 'DOORBELL_ALLOW_LOOPBACK'),
    doorbellCaFile: str(env, 'DOORBELL_CA_FILE'),
    localnetPort: within(int(env, 'LOCALNET_PORT', 8899), 'LOCALNET_PORT', 0, 65534, 'its WebSocket takes the next port'),
    localnetSolUsd: within(int(env, 'LOCALNET_SOL_USD', 150), 'LOCALNET_SOL_USD', Number.MIN_VALUE, 1e9, 'a price in dollars'),
    serviceMasterKey: str(env, 'SERVICE_MASTER_KEY'),
    serviceMasterKeyOld: str(env, 'SERVICE_MASTER_KEY_OLD'),
    readModelSchema: str(env, 'READ_MODEL_SCHEMA') ?? 'rm',
    logLevel: str(env, 'LOG_LEVEL') ?? 'info',
    trustProxy: trustProxy(str(env, 'TRUST_PROXY')),
    registerPerIpPerHour: int(env, 'REGISTER_PER_IP_PER_HOUR', 20),
    requestsPerSecond: int(env, 'RATE_LIMIT_RPS', 50),
    readYourWritesMs: int(env, 'READ_YOUR_WRITES_MS', 2000),
    secretReplayMs: within(int(env, 'SECRET_REPLAY_MS', 600_000), 'SECRET_REPLAY_MS', 0, 24 * 3_600_000, 'a period in milliseconds, at most the 24 h a key is kept'),
    checkpointPollMs: within(int(env, 'CHECKPOINT_POLL_MS', 25), 'CHECKPOINT_POLL_MS', 5, 1000, 'a period in milliseconds'),
    snapshotEvery: int(env, 'SNAPSHOT_EVERY', 1000),
    stateHotKeys: int(env, 'STATE_HOT_KEYS', 20000),
    databaseConnectTimeoutMs: databaseTimeout(env, 'DATABASE_CONNECT_TIMEOUT_MS', 10_000),
    databaseStatementTimeoutMs: databaseTimeout(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30_000),
    databaseIdleInTransactionTimeoutMs: databaseTimeout(env, 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 60_000),
    attestFullEveryMs: attestPeriod(int(env, 'ATTEST_FULL_EVERY_MS', 21_600_000)),
    projectorBatchSize: int(env, 'PROJECTOR_BATCH_SIZE', 500),
    projectorHealthPort: int(env, 'PROJECTOR_HEALTH_PORT', 9464),
    bodyLimit: str(env, 'BODY_LIMIT') ?? '6mb',
    outboxRecoveryMs: within(int(env, 'OUTBOX_RECOVERY_MS', 30_000), 'OUTBOX_RECOVERY_MS', 100, 86_400_000, 'a period in milliseconds'),
    graduationWaitMs: within(int(env, 'GRADUATION_WAIT_MS', 5_000), 'GRADUATION_WAIT_MS', 0, 60_000, 'milliseconds a request is held; 0 answers at once'),
    treasuryTokenMint: base58Key(str(env, 'TREASURY_TOKEN_MINT'), 'TREASURY_TOKEN_MINT'),
    treasuryCycleMs: cyclePeriod(int(env, 'TREASURY_CYCLE_MS', 60_000)),
    treasuryReserveSol: within(int(env, 'TREASURY_RESERVE_SOL', 0.05), 'TREASURY_RESERVE_SOL', 0.01, 1e6, 'it pays network fees, the rent of the accounts a first buy opens, and keeps the wallet rent-exempt'),
    treasuryMinBuySol: within(int(env, 'TREASURY_MIN_BUY_SOL', 0.01), 'TREASURY_MIN_BUY_SOL', 0, 1e6, 'an amount of SOL'),
    treasurySlippageBps: within(int(env, 'TREASURY_SLIPPAGE_BPS', 500), 'TREASURY_SLIPPAGE_BPS', 0, 9_999, 'basis points'),
    anchorEveryEntries: Math.floor(within(int(env, 'ANCHOR_EVERY_ENTRIES', 1_000), 'ANCHOR_EVERY_ENTRIES', 0, 1e9, '0 turns anchoring off; otherwise entries')),
    anchorIntervalMs: within(int(env, 'ANCHOR_INTERVAL_MS', 600_000), 'ANCHOR_INTERVAL_MS', 0, 7 * 86_400_000, '0 anchors by count only; otherwise milliseconds'),
    faucetSolPerHour: within(int(env, 'FAUCET_SOL_PER_HOUR', 20), 'FAUCET_SOL_PER_HOUR', Number.MIN_VALUE, 1e6, 'an amount of SOL'),
    policyDelayMs: within(int(env, 'POLICY_DELAY_MS', 86_400_000), 'POLICY_DELAY_MS', 0, 31 * 86_400_000, 'milliseconds'),
    defaultPolicyMaxSolPerTrade: optionalSol(env, 'DEFAULT_POLICY_MAX_SOL_PER_TRADE'),
    defaultPolicyMaxSolPerDay: optionalSol(env, 'DEFAULT_POLICY_MAX_SOL_PER_DAY'),
  };
}

/** The variables the README documents, with their defaults; a test keeps the two in step. */
export const CONFIG_VARIABLES = [
  'PORT', 'HOST', 'PUBLIC_URL', 'DATA_DIR', 'DATABASE_URL', 'EVENTSTORE_URL', 'REDIS_URL', 'REDIS_PREFIX', 'SOLANA_RPC_URL',
  'PRICE_URL', 'JUPITER_URL', 'DOORBELL_ALLOW_LOOPBACK', 'DOORBELL_CA_FILE',
  'LOCALNET_PORT', 'LOCALNET_SOL_USD', 'SERVICE_MASTER_KEY', 'SERVICE_MASTER_KEY_OLD', 'READ_MODEL_SCHEMA', 'LOG_LEVEL', 'TRUST_PROXY',
  'REGISTER_PER_IP_PER_HOUR', 'RATE_LIMIT_RPS', 'READ_YOUR_WRITES_MS', 'SECRET_REPLAY_MS', 'CHECKPOINT_POLL_MS', 'SNAPSHOT_EVERY', 'STATE_HOT_KEYS',
  'DATABASE_CONNECT_TIMEOUT_MS', 'DATABASE_STATEMENT_TIMEOUT_MS', 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 'ATTEST_FULL_EVERY_MS', 'PROJECTOR_BATCH_SIZE',
  'PROJECTOR_HEALTH_PORT', 'BODY_LIMIT', 'OUTBOX_RECOVERY_MS', 'GRADUATION_WAIT_MS',
  'TREASURY_TOKEN_MINT', 'TREASURY_CYCLE_MS', 'TREASURY_RESERVE_SOL', 'TREASURY_MIN_BUY_SOL', 'TREASURY_SLIPPAGE_BPS',
  'FAUCET_SOL_PER_HOUR', 'ANCHOR_EVERY_ENTRIES', 'ANCHOR_INTERVAL_MS', 'POLICY_DELAY_MS', 'DEFAULT_POLICY_MAX_SOL_PER_TRADE', 'DEFAULT_POLICY_MAX_SOL_PER_DAY',
] as const;
