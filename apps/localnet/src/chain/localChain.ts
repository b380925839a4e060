import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
// litesvm's raw class takes and returns transaction bytes (web3.js v1's form); it is internal, hence the ~1.5.0 pin.
import { Clock, LiteSvm, type TransactionMetadata } from 'litesvm/dist/internal';
import bs58 from 'bs58';
import {
  AddressLookupTableAccount,
  AddressLookupTableProgram,
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  VersionedMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import { fromLiteSvmError, TransactionErrorJson, TransactionFailure } from '../runtime/errors';
import { Executor, LoadedMessage, readAccount, writeAccount } from '../runtime/executor';
import type { AccountState, EmulatedProgram, GenesisContext } from '../runtime/program';
import { findPda } from '../runtime/pda';
import { innerInstruction, InnerInstructionsJson, ReturnData, revivedInnerInstructions, StoredInnerInstructions, storedInnerInstructions, Trace } from '../runtime/trace';
import { BLOCKHASH_VALIDITY, BlockhashWindow } from './blockhashes';
import { ChainStore, WalRecord } from './persistence';
import { sanitizeFailure } from './sanitize';
import { signaturesValid } from './signatures';
import { decodeMint, decodeTokenAccount, uiTokenAmount } from './tokens';

export const SLOT_MS = 400;
export const LAMPORTS_PER_SIGNATURE = 5000n;
export const SLOTS_PER_EPOCH = 432_000;
const SLOT_HASHES_KEPT = 512;
const MAX_RECORDS = 20_000;
const SNAPSHOT_EVERY = 2_000;
/** The newest transactions a snapshot keeps, so that history survives a restart. */
const SNAPSHOT_RECORDS = 2_000;
const RECORDS_PER_TURN = 100;
const MAX_SIGNATURES_PER_ADDRESS = 1_000;

/** Deterministic, like solana-test-validator's faucet: a sandbox key, never a secret. */
export const FAUCET = Keypair.fromSeed(createHash('sha256').update('localnet faucet').digest());
const RUNTIME_PAYER = Keypair.fromSeed(createHash('sha256').update('localnet runtime payer').digest()).publicKey;
const FAUCET_LAMPORTS = 500_000_000n * 1_000_000_000n;

export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: ReturnType<typeof uiTokenAmount>;
}

export interface TransactionRecord {
  signature: string;
  slot: number;
  blockTime: number;
  version: 'legacy' | 0;
  wire: Buffer;
  accountKeys: string[];
  meta: {
    err: TransactionErrorJson | null;
    status: { Ok: null } | { Err: TransactionErrorJson };
    fee: number;
    preBalances: number[];
    postBalances: number[];
    preTokenBalances: TokenBalance[];
    postTokenBalances: TokenBalance[];
    logMessages: string[];
    innerInstructions: InnerInstructionsJson[];
    loadedAddresses: { writable: string[]; readonly: string[] };
    rewards: unknown[];
    computeUnitsConsumed: number;
    /** Present only when a program left return data, as the RPC omits it otherwise. */
    returnData?: ReturnDataJson;
  };
}

export interface ReturnDataJson {
  programId: string;
  data: [string, 'base64'];
}

export function returnDataJson(returnData: ReturnData | null): ReturnDataJson | null {
  return returnData ? { programId: returnData.programId.toBase58(), data: [returnData.data.toString('base64'), 'base64'] } : null;
}

export interface SimulationResult {
  err: TransactionErrorJson | null;
  logs: string[];
  innerInstructions: InnerInstructionsJson[];
  unitsConsumed: number;
  returnData: ReturnDataJson | null;
  accounts: (AccountState | null)[] | null;
  replacementBlockhash: { blockhash: string; lastValidBlockHeight: number } | null;
}

/** Refusals that the RPC reports as JSON-RPC errors rather than as a failed transaction. */
export class RpcRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export interface LocalChainOptions {
  /** Where the chain persists; null keeps it in memory only. */
  dataDir: string | null;
  programs: readonly EmulatedProgram[];
  /** Seeding run once when the chain is created, after the programs' own genesis (e.g. the local stablecoin and its pool). */
  seeds?: readonly ((genesis: GenesisContext) => void)[];
  now?: () => number;
  /** Committed transactions between snapshots (the log is replayed over the last one at start). */
  snapshotEvery?: number;
  /** Transactions kept in memory for getTransaction and friends. */
  historyLimit?: number;
  /** What getVersion adds, beside the versions, to say what this chain is (the bundled chain names its APIs). */
  identity?: Record<string, unknown>;
}

interface Committed {
  record: TransactionRecord;
  writable: PublicKey[];
}

/**
 * LiteSVM plus what a validator adds around it: slots and a blockhash window on a 400 ms clock, signature
 * checks, fees, transaction history with balances, emulated programs, and durability (a write-ahead log
 * of every committed transaction, replayed over the last snapshot at start).
 */
export class LocalChain extends EventEmitter {
  private svm!: LiteSvm;
  private executor!: Executor;
  private blockhashes = new BlockhashWindow();
  /** Our own blockhashes, random per slot, so none can recur after a restart (LiteSVM's sequence would). */
  private latest = '';
  /** Newest first, as the SlotHashes sysvar holds them (address lookup tables check a recent slot against it). */
  private slotHashes: { slot: number; hash: string }[] = [];
  /** Signatures that landed with a blockhash still valid: a resend is AlreadyProcessed, not a second execution. */
  private recent = new Map<string, number>();
  private readonly records = new Map<string, TransactionRecord>();
  private readonly byAddress = new Map<string, string[]>();
  private readonly bySlot = new Map<number, string[]>();
  private genesisAt = 0;
  /** Transactions committed since genesis (replays count again, so this survives restarts). */
  transactionCount = 0;
  private slotNow = 0;
  private replaying = false;
  private halted = false;
  private closed = false;
  private readonly now: () => number;
  private readonly programs: Map<string, EmulatedProgram>;
  private readonly seeds: readonly ((genesis: GenesisContext) => void)[];
  private readonly snapshotEvery: number;
  private readonly historyLimit: number;
  readonly identity: Record<string, unknown>;

  private constructor(
    options: LocalChainOptions,
    private readonly store: ChainStore | null,
  ) {
    super();
    this.setMaxListeners(0);
    this.now = options.now ?? Date.now;
    this.programs = new Map(options.programs.map((p) => [p.programId.toBase58(), p]));
    this.seeds = options.seeds ?? [];
    this.snapshotEvery = options.snapshotEvery ?? SNAPSHOT_EVERY;
    this.historyLimit = options.historyLimit ?? MAX_RECORDS;
    this.identity = options.identity ?? {};
  }

  static async open(options: LocalChainOptions): Promise<LocalChain> {
    const store = options.dataDir ? await ChainStore.open(options.dataDir) : null;
    const chain = new LocalChain(options, store);
    const saved = store ? await store.load() : null;
    if (saved) {
      chain.restore(saved.state, saved.meta);
      chain.replaying = true;
      for (const record of saved.wal) chain.replay(record);
      chain.replaying = false;
    } else {
      chain.genesis();
      await chain.snapshot();
    }
    chain.tick();
    return chain;
  }

  // ---- clock -------------------------------------------------------------------------------------

  get slot(): number {
    this.tick();
    return this.slotNow;
  }

  get blockHeight(): number {
    return this.slot;
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: number } {
    this.tick();
    return { blockhash: this.latest, lastValidBlockHeight: this.blockhashes.lastValidBlockHeight(this.latest) ?? this.slotNow + BLOCKHASH_VALIDITY };
  }

  isBlockhashValid(hash: string): boolean {
    return this.blockhashes.isValid(hash, this.slot);
  }

  /** Advances slots with wall time; each new slot brings a new blockhash (idle stretches jump at once). */
  tick(): void {
    if (this.replaying) return;
    const target = Math.floor((this.now() - this.genesisAt) / SLOT_MS);
    if (target <= this.slotNow) return;
    const parent = this.slotNow;
    this.setClock(target, this.now());
    this.newBlockhash(target);
    this.blockhashes.prune(target);
    for (const [signature, lastValid] of this.recent) {
      if (lastValid >= target) break;
      this.recent.delete(signature);
    }
    this.emit('slot', { slot: target, parent, root: target });
  }

  private newBlockhash(slot: number): void {
    this.latest = bs58.encode(randomBytes(32));
    this.blockhashes.add(this.latest, slot + BLOCKHASH_VALIDITY);
    this.noteSlot(slot, this.latest);
  }

  /**
   * Adds `slot` to SlotHashes, and every slot skipped since the last one (an idle stretch jumps the clock),
   * so that the sysvar holds the same slots live and in a replay: lookup tables check only the slot.
   */
  private noteSlot(slot: number, hash: string): void {
    const last = this.slotHashes[0]?.slot ?? -1;
    if (slot <= last) return;
    for (let skipped = Math.max(last + 1, slot - SLOT_HASHES_KEPT + 1); skipped < slot; skipped++) {
      this.slotHashes.unshift({ slot: skipped, hash: this.standInHash(skipped) });
    }
    this.slotHashes.unshift({ slot, hash });
    if (this.slotHashes.length > SLOT_HASHES_KEPT) this.slotHashes.length = SLOT_HASHES_KEPT;
    this.svm.setSlotHashes(this.slotHashes.map((h) => ({ slot: BigInt(h.slot), hash: h.hash })));
  }

  private standInHash(slot: number): string {
    return bs58.encode(createHash('sha256').update(`slot ${this.genesisAt} ${slot}`).digest());
  }

  private setClock(slot: number, atMs: number): void {
    this.slotNow = slot;
    const epoch = BigInt(Math.floor(slot / SLOTS_PER_EPOCH));
    this.svm.setClock(new Clock(BigInt(slot), 0n, epoch, epoch + 1n, BigInt(Math.floor(atMs / 1000))));
  }

  private clock(): { slot: bigint; unixTimestamp: bigint } {
    const clock = this.svm.getClock();
    return { slot: clock.slot, unixTimestamp: clock.unixTimestamp };
  }

  // ---- accounts ----------------------------------------------------------------------------------

  account(pubkey: PublicKey): AccountState | null {
    const state = readAccount(this.svm, pubkey);
    return state && (state.lamports > 0n || state.data.length > 0) ? state : null;
  }

  programAccounts(programId: PublicKey): { pubkey: PublicKey; account: AccountState }[] {
    return this.svm.getProgramAccounts(programId.toBytes()).map((entry) => {
      const raw = entry.account();
      return {
        pubkey: new PublicKey(entry.address),
        account: { lamports: raw.lamports(), data: Buffer.from(raw.data()), owner: new PublicKey(raw.owner()), executable: raw.executable() },
      };
    });
  }

  rentExempt(length: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(length));
  }

  // ---- transactions ------------------------------------------------------------------------------

  /** Validates, executes and commits a wire transaction; resolves once it is durable. */
  async send(wire: Buffer, options: { skipPreflight?: boolean } = {}): Promise<string> {
    if (this.halted) throw new RpcRefusal(-32603, 'Internal error: the chain could not write its log and has stopped accepting transactions; restart it');
    this.tick();
    const tx = deserialize(wire);
    const signature = bs58.encode(tx.signatures[0] ?? new Uint8Array(64));
    if (this.landed(signature)) {
      // Mainnet's RPC forwards a resend without simulating it, and the leader drops the duplicate.
      if (options.skipPreflight) return signature;
      throw preflightFailure('AlreadyProcessed', []);
    }
    const checks = this.check(tx, wire.length, true);
    if (checks) {
      // Mainnet's RPC forwards an unchecked transaction and the leader drops it; preflight reports why.
      if (options.skipPreflight) return signature;
      throw checks;
    }
    const loaded = this.load(tx);
    const committed = this.commit(tx, wire, loaded, { rollbackOnError: !options.skipPreflight });
    if (!committed) return signature;
    try {
      await this.persist({ wire: wire.toString('base64'), slot: committed.record.slot, at: committed.record.blockTime * 1000 });
    } catch (error) {
      // Memory is now ahead of the disk: stop taking writes so that nothing else is acknowledged and then lost.
      this.halted = true;
      this.emit('internal-error', error);
      throw new RpcRefusal(-32603, 'Internal error: the chain could not write its log');
    }
    this.announce(committed);
    return signature;
  }

  simulate(wire: Buffer, options: { sigVerify?: boolean; replaceRecentBlockhash?: boolean; accounts?: string[] } = {}): SimulationResult {
    this.tick();
    let tx = deserialize(wire);
    const malformed = sanitizeFailure(tx, wire.length);
    if (malformed) throw new RpcRefusal(-32602, `invalid transaction: ${malformed}`);
    if (options.sigVerify && options.replaceRecentBlockhash) {
      throw new RpcRefusal(-32602, 'Invalid params: sigVerify may not be used with replaceRecentBlockhash');
    }
    let replacementBlockhash: SimulationResult['replacementBlockhash'] = null;
    if (options.replaceRecentBlockhash) {
      replacementBlockhash = this.latestBlockhash();
      tx.message.recentBlockhash = replacementBlockhash.blockhash;
      tx = new VersionedTransaction(tx.message, tx.signatures);
    }
    if (options.sigVerify && !signaturesValid(tx)) throw new RpcRefusal(-32003, 'Transaction signature verification failure');
    if (!replacementBlockhash && !this.blockhashes.isValid(tx.message.recentBlockhash, this.slotNow)) {
      return { err: 'BlockhashNotFound', logs: [], innerInstructions: [], unitsConsumed: 0, returnData: null, accounts: null, replacementBlockhash };
    }
    let loaded: LoadedMessage;
    try {
      loaded = this.load(tx);
    } catch (error) {
      const err = error instanceof RpcRefusal ? (error.data as { err?: TransactionErrorJson } | undefined)?.err : undefined;
      if (err) return { err, logs: [], innerInstructions: [], unitsConsumed: 0, returnData: null, accounts: null, replacementBlockhash };
      throw error;
    }
    const before = loaded.keys.map((key) => readAccount(this.svm, key));
    let outcome: ReturnType<LocalChain['execute']>;
    try {
      outcome = this.execute(tx, loaded, before);
    } catch (error) {
      if (error instanceof TransactionFailure) return { err: error.error, logs: error.logs, innerInstructions: [], unitsConsumed: 0, returnData: null, accounts: null, replacementBlockhash };
      throw error;
    }
    const accounts = options.accounts?.map((address) => this.account(new PublicKey(address))) ?? null;
    loaded.keys.forEach((key, i) => loaded.writable[i] && writeAccount(this.svm, key, before[i]));
    return { err: outcome.err, logs: outcome.logs, innerInstructions: outcome.innerInstructions, unitsConsumed: outcome.units, returnData: returnDataJson(outcome.returnData), accounts, replacementBlockhash };
  }

  /** Funds an address from the faucet with a real, recorded System transfer. */
  async airdrop(to: PublicKey, lamports: bigint): Promise<string> {
    this.ensureFaucet(lamports);
    return this.sendAsLocalnet([SystemProgram.transfer({ fromPubkey: FAUCET.publicKey, toPubkey: to, lamports })], [FAUCET]);
  }

  /**
   * Runs instructions signed by keys the localnet holds (the faucet, tools and genesis of seeded venues).
   * The same instructions signed over the same blockhash are the same transaction, which the chain refuses as
   * a resend: a request repeated within one slot waits for the next slot's blockhash, as web3.js does when it
   * would resend a signature.
   */
  async sendAsLocalnet(instructions: ConstructorParameters<typeof TransactionMessage>[0]['instructions'], signers: Keypair[]): Promise<string> {
    for (;;) {
      const message = new TransactionMessage({
        payerKey: signers[0].publicKey,
        recentBlockhash: this.latestBlockhash().blockhash,
        instructions,
      }).compileToLegacyMessage();
      const tx = new VersionedTransaction(message);
      tx.sign(signers);
      // The check and send()'s commit run in one turn, so a concurrent twin cannot land in between.
      if (!this.landed(bs58.encode(tx.signatures[0]))) return this.send(Buffer.from(tx.serialize()));
      await this.nextSlot();
    }
  }

  private landed(signature: string): boolean {
    return this.recent.has(signature) || this.records.has(signature);
  }

  private nextSlot(): Promise<void> {
    return this.untilSlot(this.slotNow + 1);
  }

  /**
   * Resolves once the chain has reached `slot`. Slots move only when the chain is asked, so this asks at each slot
   * boundary until then; it rejects when the chain closes or `signal` aborts.
   */
  untilSlot(slot: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const abort = () => {
        clearTimeout(timer);
        reject(signal?.reason ?? new Error('aborted'));
      };
      const poll = () => {
        if (signal?.aborted) return;
        if (this.closed) {
          signal?.removeEventListener('abort', abort);
          return reject(new RpcRefusal(-32603, 'Internal error: the chain is shutting down'));
        }
        this.tick();
        if (this.slotNow >= slot) {
          signal?.removeEventListener('abort', abort);
          return resolve();
        }
        // An injected clock may stand still or step back: look again within a slot whatever it says.
        timer = setTimeout(poll, Math.min(SLOT_MS, Math.max(1, this.genesisAt + slot * SLOT_MS - this.now())));
      };
      if (signal?.aborted) return abort();
      signal?.addEventListener('abort', abort, { once: true });
      poll();
    });
  }

  record(signature: string): TransactionRecord | undefined {
    return this.records.get(signature);
  }

  /** The transactions of a slot's block, in order (as far back as history is kept). */
  block(slot: number): TransactionRecord[] {
    return (this.bySlot.get(slot) ?? []).map((s) => this.records.get(s)).filter((r): r is TransactionRecord => !!r);
  }

  /** The block time of a past slot: slots run every 400 ms from genesis. */
  blockTime(slot: number): number {
    return Math.floor((this.genesisAt + slot * SLOT_MS) / 1000);
  }

  /** The blockhash of a recent slot, or a stable stand-in for one past the SlotHashes window. */
  blockhashOf(slot: number): string {
    return this.slotHashes.find((h) => h.slot === slot)?.hash ?? this.standInHash(slot);
  }

  /** Lamports outside the faucet (everything was minted into it at genesis). */
  supply(): { total: bigint; circulating: bigint } {
    const faucet = this.account(FAUCET.publicKey)?.lamports ?? 0n;
    return { total: FAUCET_LAMPORTS, circulating: FAUCET_LAMPORTS - faucet };
  }

  signaturesFor(address: string): TransactionRecord[] {
    return (this.byAddress.get(address) ?? []).map((s) => this.records.get(s)).filter((r): r is TransactionRecord => !!r);
  }

  // ---- execution ---------------------------------------------------------------------------------

  /** Signature and blockhash checks a validator makes before execution; null when they pass. */
  private check(tx: VersionedTransaction, wireLength: number, verifySignatures: boolean): RpcRefusal | null {
    const malformed = sanitizeFailure(tx, wireLength);
    if (malformed) return new RpcRefusal(-32602, `invalid transaction: ${malformed}`);
    if (verifySignatures && !signaturesValid(tx)) return new RpcRefusal(-32003, 'Transaction signature verification failure');
    if (!this.blockhashes.isValid(tx.message.recentBlockhash, this.slotNow)) return preflightFailure('BlockhashNotFound', []);
    return null;
  }

  private load(tx: VersionedTransaction): LoadedMessage {
    const message = tx.message;
    let lookups: AddressLookupTableAccount[] = [];
    if ('addressTableLookups' in message && message.addressTableLookups.length > 0) {
      lookups = message.addressTableLookups.map((lookup) => {
        const account = this.account(lookup.accountKey);
        if (!account) throw preflightFailure('AddressLookupTableNotFound', []);
        if (!account.owner.equals(AddressLookupTableProgram.programId)) throw preflightFailure('InvalidAddressLookupTableOwner', []);
        try {
          return new AddressLookupTableAccount({ key: lookup.accountKey, state: AddressLookupTableAccount.deserialize(account.data) });
        } catch {
          throw preflightFailure('InvalidAddressLookupTableData', []);
        }
      });
    }
    let keys: PublicKey[];
    try {
      const accountKeys = message.getAccountKeys({ addressLookupTableAccounts: lookups });
      keys = [...accountKeys.staticAccountKeys, ...(accountKeys.accountKeysFromLookups?.writable ?? []), ...(accountKeys.accountKeysFromLookups?.readonly ?? [])];
    } catch {
      throw preflightFailure('InvalidAddressLookupTableIndex', []);
    }
    return {
      keys,
      signer: keys.map((_, i) => message.isAccountSigner(i)),
      writable: keys.map((_, i) => message.isAccountWritable(i)),
      instructions: message.compiledInstructions.map((ix) => ({
        programIndex: ix.programIdIndex,
        accountIndexes: ix.accountKeyIndexes,
        data: Buffer.from(ix.data),
      })),
    };
  }

  /** Executes against live state; throws TransactionFailure when the transaction cannot be charged a fee. */
  private execute(
    tx: VersionedTransaction,
    loaded: LoadedMessage,
    before: (AccountState | null)[],
  ): { err: TransactionErrorJson | null; logs: string[]; innerInstructions: InnerInstructionsJson[]; units: number; fee: bigint; returnData: ReturnData | null } {
    const fee = feeOf(loaded);
    const emulated = loaded.instructions.some((ix) => this.executor.isEmulated(loaded.keys[ix.programIndex]));
    if (!emulated) {
      const result = this.svm.sendVersionedTransaction(tx.serialize()) as { err?: () => unknown; meta?: () => unknown };
      const meta = (result.meta ? result.meta() : result) as TransactionMetadata;
      const err = result.err ? fromLiteSvmError(result.err()) : null;
      if (err !== null && typeof err !== 'object') throw new TransactionFailure(err, meta.logs());
      const returned = meta.returnData();
      const data = returned.data();
      const returnData = data.length > 0 ? { programId: new PublicKey(returned.programId()), data: Buffer.from(data) } : null;
      return { err, logs: meta.logs(), innerInstructions: innerInstructionsOf(meta), units: Number(meta.computeUnitsConsumed()), fee, returnData };
    }
    const payer = before[0];
    if (!payer || payer.lamports === 0n) throw new TransactionFailure('AccountNotFound');
    if (payer.lamports < fee) throw new TransactionFailure('InsufficientFundsForFee');
    writeAccount(this.svm, loaded.keys[0], { ...payer, lamports: payer.lamports - fee });
    const outcome = this.executor.execute(loaded);
    if (outcome.err) {
      loaded.keys.forEach((key, i) => loaded.writable[i] && writeAccount(this.svm, key, before[i]));
      writeAccount(this.svm, loaded.keys[0], { ...payer, lamports: payer.lamports - fee });
    }
    return { err: outcome.err, logs: outcome.logs, innerInstructions: outcome.innerInstructions, units: outcome.computeUnits, fee, returnData: outcome.returnData };
  }

  /** Executes and records; null when the transaction was refused without landing. */
  private commit(tx: VersionedTransaction, wire: Buffer, loaded: LoadedMessage, options: { rollbackOnError: boolean }): Committed | null {
    const before = loaded.keys.map((key) => readAccount(this.svm, key));
    const mints = new Map<string, number>();
    const preTokenBalances = this.tokenBalances(before, mints);
    let outcome: ReturnType<LocalChain['execute']>;
    try {
      outcome = this.execute(tx, loaded, before);
    } catch (error) {
      if (!(error instanceof TransactionFailure)) throw error;
      if (!options.rollbackOnError) return null;
      throw preflightFailure(error.error, error.logs);
    }
    if (outcome.err && options.rollbackOnError) {
      loaded.keys.forEach((key, i) => loaded.writable[i] && writeAccount(this.svm, key, before[i]));
      throw preflightFailure(outcome.err, outcome.logs, outcome.units);
    }
    const after = loaded.keys.map((key) => readAccount(this.svm, key));
    const signature = bs58.encode(tx.signatures[0]);
    const accountKeys = loaded.keys.map((k) => k.toBase58());
    const statics = tx.message.staticAccountKeys.length;
    const record: TransactionRecord = {
      signature,
      slot: this.slotNow,
      blockTime: Number(this.svm.getClock().unixTimestamp),
      version: tx.version === 'legacy' ? 'legacy' : 0,
      wire: ownBytes(wire),
      accountKeys,
      meta: {
        err: outcome.err,
        status: outcome.err ? { Err: outcome.err } : { Ok: null },
        fee: Number(outcome.fee),
        preBalances: before.map((a) => Number(a?.lamports ?? 0n)),
        postBalances: after.map((a) => Number(a?.lamports ?? 0n)),
        preTokenBalances,
        postTokenBalances: this.tokenBalances(after, mints),
        logMessages: outcome.logs,
        innerInstructions: outcome.innerInstructions,
        loadedAddresses: {
          writable: accountKeys.slice(statics).filter((_, i) => loaded.writable[statics + i]),
          readonly: accountKeys.slice(statics).filter((_, i) => !loaded.writable[statics + i]),
        },
        rewards: [],
        computeUnitsConsumed: outcome.units,
        ...(outcome.returnData ? { returnData: returnDataJson(outcome.returnData)! } : {}),
      },
    };
    this.remember(record);
    this.recent.set(signature, this.blockhashes.lastValidBlockHeight(tx.message.recentBlockhash) ?? this.slotNow + BLOCKHASH_VALIDITY);
    return { record, writable: loaded.keys.filter((_, i) => loaded.writable[i]) };
  }

  private tokenBalances(states: (AccountState | null)[], mints: Map<string, number>): TokenBalance[] {
    const balances: TokenBalance[] = [];
    states.forEach((state, accountIndex) => {
      const token = state && decodeTokenAccount(state);
      if (!token || !state) return;
      const mint = token.mint.toBase58();
      let decimals = mints.get(mint);
      if (decimals === undefined) {
        const mintAccount = this.account(token.mint);
        decimals = (mintAccount && decodeMint(mintAccount)?.decimals) ?? 0;
        mints.set(mint, decimals);
      }
      balances.push({ accountIndex, mint, owner: token.owner.toBase58(), programId: state.owner.toBase58(), uiTokenAmount: uiTokenAmount(token.amount, decimals) });
    });
    return balances;
  }

  private remember(record: TransactionRecord): void {
    this.transactionCount++;
    this.records.set(record.signature, record);
    if (this.records.size > this.historyLimit) {
      const evicted = this.records.get(this.records.keys().next().value!)!;
      this.records.delete(evicted.signature);
      const inSlot = this.bySlot.get(evicted.slot);
      if (inSlot && inSlot[0] === evicted.signature) inSlot.shift();
      if (inSlot?.length === 0) this.bySlot.delete(evicted.slot);
      // Evicted history leaves the address index too, or it would grow with every address ever seen.
      for (const key of evicted.accountKeys) {
        const list = this.byAddress.get(key);
        if (list && list[0] === evicted.signature) list.shift();
        if (list?.length === 0) this.byAddress.delete(key);
      }
    }
    let inSlot = this.bySlot.get(record.slot);
    if (!inSlot) this.bySlot.set(record.slot, (inSlot = []));
    inSlot.push(record.signature);
    for (const key of record.accountKeys) {
      let list = this.byAddress.get(key);
      if (!list) this.byAddress.set(key, (list = []));
      list.push(record.signature);
      if (list.length > MAX_SIGNATURES_PER_ADDRESS) list.shift();
    }
  }

  /** Tells subscribers; the transaction is durable by now, so a listener's fault must not reach its sender. */
  private announce(committed: Committed): void {
    try {
      this.emit('transaction', committed.record);
      if (this.listenerCount('account') > 0) for (const key of committed.writable) this.emit('account', key);
    } catch (error) {
      this.emit('internal-error', error);
    }
  }

  // ---- genesis and persistence -------------------------------------------------------------------

  private fresh(svm: LiteSvm): void {
    svm.setSigverify(false);
    svm.setBlockhashCheck(false);
    svm.setTransactionHistory(0n);
    this.svm = svm;
    this.executor = new Executor(svm, this.programs, RUNTIME_PAYER, () => this.clock(), (error) => this.emit('internal-error', error));
    // Clients check that a program exists before using it; the emulated ones get the account a deployed program has.
    for (const program of this.programs.values()) {
      if (this.account(program.programId)) continue;
      const [programData] = findPda([program.programId.toBuffer()], UPGRADEABLE_LOADER);
      const data = Buffer.alloc(36);
      data.writeUInt32LE(2, 0); // UpgradeableLoaderState::Program
      programData.toBuffer().copy(data, 4);
      writeAccount(svm, program.programId, { lamports: this.rentExempt(36), data, owner: UPGRADEABLE_LOADER, executable: true });
    }
  }

  private genesis(): void {
    this.fresh(new LiteSvm());
    this.genesisAt = this.now();
    this.setClock(0, this.genesisAt);
    this.newBlockhash(0);
    writeAccount(this.svm, FAUCET.publicKey, { lamports: FAUCET_LAMPORTS, data: Buffer.alloc(0), owner: SystemProgram.programId, executable: false });
    writeAccount(this.svm, RUNTIME_PAYER, { lamports: 1n << 62n, data: Buffer.alloc(0), owner: SystemProgram.programId, executable: false });
    const context: GenesisContext = {
      setAccount: (pubkey, state) => writeAccount(this.svm, pubkey, state),
      rentExempt: (length) => this.rentExempt(length),
      run: (instructions, signers) => {
        const trace = new Trace([]);
        for (const instruction of instructions) {
          const granted = new Set(signers.map((s) => s.toBase58()));
          const keys = instruction.keys.map((k) => ({ ...k, isSigner: k.isSigner || granted.has(k.pubkey.toBase58()) }));
          this.executor.runNative({ ...instruction, keys } as typeof instruction, 0, 1, trace);
        }
      },
    };
    for (const program of this.programs.values()) program.genesis?.(context);
    for (const seed of this.seeds) seed(context);
  }

  private ensureFaucet(lamports: bigint): void {
    const faucet = this.account(FAUCET.publicKey);
    if ((faucet?.lamports ?? 0n) < lamports + 1_000_000_000n) {
      throw new RpcRefusal(-32603, 'Internal error: the faucet is dry');
    }
  }

  private restore(state: Buffer, meta: ChainMeta): void {
    this.fresh(LiteSvm.fromBytes(state));
    this.genesisAt = meta.genesisAt;
    this.slotNow = meta.slot;
    this.blockhashes = BlockhashWindow.from(meta.blockhashes);
    this.latest = meta.blockhashes.at(-1)?.[0] ?? '';
    this.slotHashes = meta.slotHashes;
    this.recent = new Map(meta.recentSignatures);
    if (this.slotHashes.length > 0) this.svm.setSlotHashes(this.slotHashes.map((h) => ({ slot: BigInt(h.slot), hash: h.hash })));
    for (const record of meta.records) this.remember(reviveRecord(record));
    this.transactionCount = meta.transactionCount;
  }

  private replay(entry: WalRecord): void {
    const wire = Buffer.from(entry.wire, 'base64');
    const tx = deserialize(wire);
    this.setClock(entry.slot, entry.at);
    this.noteSlot(entry.slot, this.standInHash(entry.slot));
    this.commit(tx, wire, this.load(tx), { rollbackOnError: false });
  }

  private async persist(entry: WalRecord): Promise<void> {
    if (!this.store || this.replaying) return;
    const durable = this.store.append(entry);
    // Taken in this tick, before the append is awaited: no other commit can slip between state and log rotation.
    if (this.store.walLength >= this.snapshotEvery && !this.store.busy) void this.snapshot().catch((error) => this.emit('internal-error', error));
    await durable;
  }

  snapshot(): Promise<void> {
    if (!this.store) return Promise.resolve();
    // Everything is taken in this tick, with the state; only turning the kept records into JSON waits.
    const meta: Omit<ChainMeta, 'records'> = {
      genesisAt: this.genesisAt,
      slot: this.slotNow,
      transactionCount: this.transactionCount,
      blockhashes: this.blockhashes.toJSON(),
      slotHashes: [...this.slotHashes],
      recentSignatures: [...this.recent],
    };
    const records = [...this.records.values()].slice(-SNAPSHOT_RECORDS);
    return this.store.snapshot(Buffer.from(this.svm.toBytes()), metaJson(meta, records));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.store?.settled();
    await this.snapshot();
    await this.store?.close();
    this.removeAllListeners();
  }
}

export interface ChainMeta {
  genesisAt: number;
  slot: number;
  transactionCount: number;
  blockhashes: [string, number][];
  slotHashes: { slot: number; hash: string }[];
  recentSignatures: [string, number][];
  records: StoredRecord[];
}

type StoredRecord = Omit<TransactionRecord, 'wire' | 'meta'> & {
  wire: string;
  meta: Omit<TransactionRecord['meta'], 'innerInstructions'> & { innerInstructions: StoredInnerInstructions[] };
};

/**
 * The snapshot's meta file, its records turned into JSON a slice per turn of the event loop: all of them at once
 * held it (the chain's and, bundled, the service's) for 30-50 ms. Records do not change once committed.
 */
async function metaJson(meta: Omit<ChainMeta, 'records'>, records: readonly TransactionRecord[]): Promise<Buffer> {
  const slices: string[] = [];
  for (let from = 0; from < records.length; from += RECORDS_PER_TURN) {
    if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    slices.push(records.slice(from, from + RECORDS_PER_TURN).map((record) => JSON.stringify(storedRecord(record))).join(','));
  }
  const head = JSON.stringify(meta);
  return Buffer.from(`${head.slice(0, -1)},"records":[${slices.join(',')}]}`);
}

function storedRecord(record: TransactionRecord): StoredRecord {
  return { ...record, wire: record.wire.toString('base64'), meta: { ...record.meta, innerInstructions: storedInnerInstructions(record.meta.innerInstructions) } };
}

/**
 * A copy in memory of its own. A wire decoded from a request is a slice of node's shared 8 KB buffer pool, and a
 * slice kept in the history keeps its whole slab alive: in the soak that was about 9 KB of RSS per transaction.
 */
function ownBytes(bytes: Buffer): Buffer {
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return own;
}

function reviveRecord(record: StoredRecord): TransactionRecord {
  return { ...record, wire: Buffer.from(record.wire, 'base64'), meta: { ...record.meta, innerInstructions: revivedInnerInstructions(record.meta.innerInstructions) } };
}

function innerInstructionsOf(meta: TransactionMetadata): InnerInstructionsJson[] {
  return meta
    .innerInstructions()
    .map((list, index) => ({
      index,
      instructions: list.map((inner) => {
        const compiled = inner.instruction();
        return innerInstruction(compiled.programIdIndex(), Array.from(compiled.accounts()), compiled.data(), inner.stackHeight());
      }),
    }))
    .filter((entry) => entry.instructions.length > 0);
}

function deserialize(wire: Buffer): VersionedTransaction {
  try {
    return VersionedTransaction.deserialize(wire);
  } catch (error) {
    throw new RpcRefusal(-32602, `failed to deserialize solana_transaction::versioned::VersionedTransaction: ${(error as Error).message}`);
  }
}

const UPGRADEABLE_LOADER = new PublicKey('BPFLoaderUpgradeab1e11111111111111111111111');

/** Programs that agave reserves 3,000 compute units for by default (SIMD-0170); any other gets 200,000. */
const BUILTINS = new Set(
  [
    SystemProgram.programId,
    ComputeBudgetProgram.programId,
    AddressLookupTableProgram.programId,
    new PublicKey('Stake11111111111111111111111111111111111111'),
    new PublicKey('Vote111111111111111111111111111111111111111'),
    new PublicKey('Config1111111111111111111111111111111111111'),
    UPGRADEABLE_LOADER,
    new PublicKey('BPFLoader2111111111111111111111111111111111'),
    new PublicKey('Ed25519SigVerify111111111111111111111111111'),
    new PublicKey('KeccakSecp256k11111111111111111111111111111'),
  ].map((key) => key.toBase58()),
);

/** Base fee per signature plus the compute-budget priority fee, as agave (and LiteSVM) charge it. */
export function feeOf(message: VersionedMessage | LoadedMessage): bigint {
  const keys = 'keys' in message ? message.keys : message.staticAccountKeys;
  const instructions = 'keys' in message ? message.instructions.map((ix) => ({ program: ix.programIndex, data: ix.data })) : message.compiledInstructions.map((ix) => ({ program: ix.programIdIndex, data: Buffer.from(ix.data) }));
  const signatures = 'keys' in message ? message.signer.filter(Boolean).length : message.header.numRequiredSignatures;
  let microLamports = 0n;
  let explicitLimit: bigint | null = null;
  let units = 0n;
  for (const ix of instructions) {
    const program = keys[ix.program];
    units += program && BUILTINS.has(program.toBase58()) ? 3_000n : 200_000n;
    if (!program?.equals(ComputeBudgetProgram.programId)) continue;
    if (ix.data[0] === 2 && ix.data.length >= 5) explicitLimit = BigInt(ix.data.readUInt32LE(1));
    if (ix.data[0] === 3 && ix.data.length >= 9) microLamports = ix.data.readBigUInt64LE(1);
  }
  const limit = (explicitLimit ?? units) > 1_400_000n ? 1_400_000n : (explicitLimit ?? units);
  const priority = (microLamports * limit + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(signatures) + priority;
}

function preflightFailure(err: TransactionErrorJson, logs: string[], unitsConsumed = 0): RpcRefusal {
  const failure = new TransactionFailure(err, logs);
  return new RpcRefusal(-32002, `Transaction simulation failed: ${failure.message}`, {
    accounts: null,
    err,
    innerInstructions: null,
    loadedAccountsDataSize: 0,
    logs,
    replacementBlockhash: null,
    returnData: null,
    unitsConsumed,
  });
}
