import bs58 from 'bs58';
import { PublicKey, VersionedMessage, VersionedTransaction } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { feeOf, LocalChain, RpcRefusal, SLOTS_PER_EPOCH, TransactionRecord } from '../chain/localChain';
import { decodeMint, decodeTokenAccount, uiTokenAmount } from '../chain/tokens';
import { decodeWire, encodeAccount, EncodeOptions, encodingOf, parsePubkey } from './encoding';
import { RpcError } from './errors';
import { parsedInstruction } from './parsedInstructions';
import type { InnerInstructionsJson } from '../runtime/trace';

export const SOLANA_CORE_VERSION = '2.2.0';
const FEATURE_SET = 3294202862;

type Params = unknown[];
type Method = (chain: LocalChain, params: Params) => unknown | Promise<unknown>;

const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_SIGNATURE_STATUSES = 256;
const MAX_AIRDROP_LAMPORTS = 1_000_000n * 1_000_000_000n;

function withContext<T>(chain: LocalChain, value: T) {
  return { context: { apiVersion: SOLANA_CORE_VERSION, slot: chain.slot }, value };
}

function config(params: Params, index: number): Record<string, any> {
  const value = params[index];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw RpcError.invalidParams('Invalid params: invalid type: expected a config object');
  return value as Record<string, any>;
}

function integer(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw RpcError.invalidParams(`Invalid params: ${name} must be a non-negative integer`);
  return value;
}

function accountOrNull(chain: LocalChain, key: PublicKey, options: EncodeOptions) {
  const account = chain.account(key);
  return account ? encodeAccount(chain, account, options) : null;
}

/** Throws the RPC's invalid-params error for any malformed filter, whether or not an earlier one would match. */
export function checkFilters(filters: unknown): void {
  matchesFilters(Buffer.alloc(0), filters, true);
}

export function matchesFilters(data: Buffer, filters: unknown, checkAll = false): boolean {
  if (filters === undefined) return true;
  if (!Array.isArray(filters)) throw RpcError.invalidParams('Invalid params: filters must be an array');
  let matches = true;
  for (const filter of filters) {
    if (!matches && !checkAll) return false;
    if (filter && typeof filter === 'object' && 'dataSize' in filter) {
      if (data.length !== integer(filter.dataSize, 'dataSize')) matches = false;
    } else if (filter && typeof filter === 'object' && 'memcmp' in filter) {
      const { offset, bytes, encoding } = filter.memcmp ?? {};
      integer(offset, 'memcmp.offset');
      if (typeof bytes !== 'string') throw RpcError.invalidParams('Invalid params: memcmp.bytes must be a string');
      let wanted: Buffer;
      try {
        wanted = encoding === 'base64' ? Buffer.from(bytes, 'base64') : Buffer.from(bs58.decode(bytes));
      } catch {
        throw RpcError.invalidParams('Invalid params: memcmp.bytes is not valid base58');
      }
      if (!data.subarray(offset, offset + wanted.length).equals(wanted)) matches = false;
    } else if (filter && typeof filter === 'object' && 'tokenAccountState' in filter) {
      continue;
    } else {
      throw RpcError.invalidParams('Invalid params: unknown filter');
    }
  }
  return matches;
}

function tokenAccountsOf(chain: LocalChain, owner: PublicKey, filter: Record<string, unknown>, options: EncodeOptions, by: 'owner' | 'delegate' = 'owner') {
  let programs = [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID];
  let mint: PublicKey | null = null;
  if (filter.mint !== undefined) {
    mint = parsePubkey(filter.mint);
    const mintAccount = chain.account(mint);
    if (!mintAccount) throw RpcError.invalidParams('Invalid param: could not find mint');
    programs = [mintAccount.owner];
  } else if (filter.programId !== undefined) {
    const programId = parsePubkey(filter.programId);
    if (!programs.some((p) => p.equals(programId))) throw RpcError.invalidParams('Invalid param: unrecognized Token program id');
    programs = [programId];
  } else {
    throw RpcError.invalidParams('Invalid params: expected mint or programId');
  }
  const found = [];
  for (const programId of programs) {
    for (const { pubkey, account } of chain.programAccounts(programId)) {
      const token = decodeTokenAccount(account);
      const holder = by === 'owner' ? token?.owner : token?.delegate;
      if (!token || !holder?.equals(owner) || (mint && !token.mint.equals(mint))) continue;
      found.push({ pubkey: pubkey.toBase58(), account: encodeAccount(chain, account, options) });
    }
  }
  return found;
}

function statusOf(record: TransactionRecord) {
  return { slot: record.slot, confirmations: null, err: record.meta.err, status: record.meta.status, confirmationStatus: 'finalized' };
}

function encodeTransaction(record: TransactionRecord, encoding: string) {
  if (encoding === 'base64') return [record.wire.toString('base64'), 'base64'];
  if (encoding === 'base58') return [bs58.encode(record.wire), 'base58'];
  const tx = VersionedTransaction.deserialize(record.wire);
  const message = tx.message;
  const instructions = message.compiledInstructions.map((ix) => ({
    programIdIndex: ix.programIdIndex,
    accounts: ix.accountKeyIndexes,
    data: bs58.encode(ix.data),
    stackHeight: null,
  }));
  const body: Record<string, unknown> = {
    header: message.header,
    recentBlockhash: message.recentBlockhash,
    instructions,
  };
  if (encoding === 'jsonParsed') {
    body.accountKeys = record.accountKeys.map((pubkey, i) => ({
      pubkey,
      signer: i < message.header.numRequiredSignatures,
      writable: message.isAccountWritable(i),
      source: i < message.staticAccountKeys.length ? 'transaction' : 'lookupTable',
    }));
    body.instructions = message.compiledInstructions.map((ix) => parsedInstruction(record.accountKeys, ix.programIdIndex, ix.accountKeyIndexes, Buffer.from(ix.data), null));
  } else {
    body.accountKeys = message.staticAccountKeys.map((k) => k.toBase58());
  }
  if (tx.version !== 'legacy') {
    body.addressTableLookups = message.addressTableLookups.map((l) => ({
      accountKey: l.accountKey.toBase58(),
      writableIndexes: l.writableIndexes,
      readonlyIndexes: l.readonlyIndexes,
    }));
  }
  return { signatures: tx.signatures.map((s) => bs58.encode(s)), message: body };
}

function parsedInnerInstructions(keys: readonly string[], inner: readonly InnerInstructionsJson[]) {
  return inner.map(({ index, instructions }) => ({
    index,
    instructions: instructions.map((ix) => parsedInstruction(keys, ix.programIdIndex, ix.accounts, Buffer.from(bs58.decode(ix.data)), ix.stackHeight)),
  }));
}

/** The static account keys of a wire transaction (simulation reports inner instructions against them). */
function keysOf(wire: Buffer): string[] {
  return VersionedTransaction.deserialize(wire).message.staticAccountKeys.map((k) => k.toBase58());
}

function refusal(error: unknown): never {
  if (error instanceof RpcRefusal) throw new RpcError(error.code, error.message, error.data);
  throw error;
}

const IDENTITY = 'LocaLnet11111111111111111111111111111111111';
const MAX_BLOCKS_RANGE = 500_000;

function pastSlot(chain: LocalChain, value: unknown): number {
  const slot = integer(value, 'slot');
  if (slot > chain.slot) throw new RpcError(-32004, `Block not available for slot ${slot}`);
  return slot;
}

function encodeBlock(chain: LocalChain, slot: number, options: Record<string, any>) {
  const records = chain.block(slot);
  const details = options.transactionDetails ?? 'full';
  if (!['full', 'signatures', 'none', 'accounts'].includes(details)) throw RpcError.invalidParams(`Invalid params: unknown transactionDetails ${details}`);
  const block: Record<string, unknown> = {
    blockhash: chain.blockhashOf(slot),
    previousBlockhash: chain.blockhashOf(Math.max(0, slot - 1)),
    parentSlot: Math.max(0, slot - 1),
    blockTime: chain.blockTime(slot),
    blockHeight: slot,
  };
  if (options.rewards !== false) block.rewards = [];
  if (details === 'signatures') block.signatures = records.map((r) => r.signature);
  if (details === 'full' || details === 'accounts') {
    const encoding = options.encoding ?? 'json';
    block.transactions = records.map((record) => {
      if (record.version === 0 && options.maxSupportedTransactionVersion === undefined) {
        throw new RpcError(
          -32015,
          'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
        );
      }
      const entry: Record<string, unknown> = { transaction: encodeTransaction(record, encoding), meta: record.meta };
      if (options.maxSupportedTransactionVersion !== undefined) entry.version = record.version;
      return entry;
    });
  }
  return block;
}

export const METHODS: Record<string, Method> = {
  getHealth: () => 'ok',
  getVersion: (chain) => ({ 'solana-core': SOLANA_CORE_VERSION, 'feature-set': FEATURE_SET, ...chain.identity }),
  getTransactionCount: (chain) => chain.transactionCount,
  getBlockTime: (chain, params) => chain.blockTime(pastSlot(chain, params[0])),
  getBlock: (chain, params) => {
    const slot = pastSlot(chain, params[0]);
    const options = typeof params[1] === 'string' ? { encoding: params[1] } : config(params, 1);
    return encodeBlock(chain, slot, options);
  },
  getBlocks: (chain, params) => {
    const start = integer(params[0], 'start slot');
    const end = Math.min(params[1] === undefined || typeof params[1] === 'object' ? chain.slot : integer(params[1], 'end slot'), chain.slot);
    if (end - start > MAX_BLOCKS_RANGE) throw RpcError.invalidParams(`Slot range too large; max ${MAX_BLOCKS_RANGE}`);
    return Array.from({ length: Math.max(0, end - start + 1) }, (_, i) => start + i);
  },
  getBlocksWithLimit: (chain, params) => {
    const start = integer(params[0], 'start slot');
    const limit = integer(params[1], 'limit');
    if (limit > MAX_BLOCKS_RANGE) throw RpcError.invalidParams(`Limit too large; max ${MAX_BLOCKS_RANGE}`);
    const end = Math.min(start + limit - 1, chain.slot);
    return Array.from({ length: Math.max(0, end - start + 1) }, (_, i) => start + i);
  },
  getFirstAvailableBlock: () => 0,
  minimumLedgerSlot: () => 0,
  getMaxRetransmitSlot: (chain) => chain.slot,
  getMaxShredInsertSlot: (chain) => chain.slot,
  getSlotLeader: () => IDENTITY,
  getSlotLeaders: (_, params) => Array.from({ length: Math.min(integer(params[1], 'limit'), 5000) }, () => IDENTITY),
  getClusterNodes: () => [{ pubkey: IDENTITY, gossip: null, tpu: null, rpc: null, version: SOLANA_CORE_VERSION, featureSet: FEATURE_SET, shredVersion: 0 }],
  getVoteAccounts: () => ({ current: [], delinquent: [] }),
  getEpochSchedule: () => ({ slotsPerEpoch: SLOTS_PER_EPOCH, leaderScheduleSlotOffset: SLOTS_PER_EPOCH, warmup: false, firstNormalEpoch: 0, firstNormalSlot: 0 }),
  getStakeMinimumDelegation: (chain) => withContext(chain, 1_000_000_000),
  getInflationReward: (_, params) => {
    if (!Array.isArray(params[0])) throw RpcError.invalidParams('Invalid params: expected an array of addresses');
    return params[0].map((a) => (parsePubkey(a), null));
  },
  getSupply: (chain) => {
    const { total, circulating } = chain.supply();
    return withContext(chain, { total: Number(total), circulating: Number(circulating), nonCirculating: Number(total - circulating), nonCirculatingAccounts: [] });
  },
  getRecentPerformanceSamples: (chain, params) => {
    const limit = params[0] === undefined ? 720 : Math.min(integer(params[0], 'limit'), 720);
    const slot = chain.slot;
    // One sample per 60 s window, as validators record them; counts come from the kept history.
    return Array.from({ length: Math.min(limit, Math.floor(slot / 150) + 1) }, (_, i) => {
      const last = slot - i * 150;
      let numTransactions = 0;
      for (let s = Math.max(0, last - 149); s <= last; s++) numTransactions += chain.block(s).length;
      return { slot: last, numTransactions, numNonVoteTransactions: numTransactions, numSlots: 150, samplePeriodSecs: 60 };
    });
  },
  getTokenLargestAccounts: (chain, params) => {
    const mintKey = parsePubkey(params[0]);
    const mintAccount = chain.account(mintKey);
    const mint = mintAccount && decodeMint(mintAccount);
    if (!mintAccount || !mint) throw RpcError.invalidParams('Invalid param: not a Token mint');
    const holders = chain
      .programAccounts(mintAccount.owner)
      .map(({ pubkey, account }) => ({ pubkey, token: decodeTokenAccount(account) }))
      .filter((h) => h.token?.mint.equals(mintKey))
      .sort((a, b) => (a.token!.amount < b.token!.amount ? 1 : a.token!.amount > b.token!.amount ? -1 : 0))
      .slice(0, 20);
    return withContext(chain, holders.map((h) => ({ address: h.pubkey.toBase58(), ...uiTokenAmount(h.token!.amount, mint.decimals) })));
  },
  getTokenAccountsByDelegate: (chain, params) => {
    const delegate = parsePubkey(params[0]);
    const filter = config(params, 1);
    const options = config(params, 2);
    encodingOf(options);
    return withContext(chain, tokenAccountsOf(chain, delegate, filter, options, 'delegate'));
  },
  getIdentity: () => ({ identity: IDENTITY }),
  getGenesisHash: () => 'LocaLnetGenesis1111111111111111111111111111',
  getSlot: (chain) => chain.slot,
  getBlockHeight: (chain) => chain.blockHeight,
  getEpochInfo: (chain) => {
    const slot = chain.slot;
    return { absoluteSlot: slot, blockHeight: slot, epoch: Math.floor(slot / SLOTS_PER_EPOCH), slotIndex: slot % SLOTS_PER_EPOCH, slotsInEpoch: SLOTS_PER_EPOCH, transactionCount: chain.transactionCount };
  },
  getLatestBlockhash: (chain) => withContext(chain, chain.latestBlockhash()),
  isBlockhashValid: (chain, params) => {
    if (typeof params[0] !== 'string') throw RpcError.invalidParams();
    return withContext(chain, chain.isBlockhashValid(params[0]));
  },
  getBalance: (chain, params) => withContext(chain, Number(chain.account(parsePubkey(params[0]))?.lamports ?? 0n)),
  getAccountInfo: (chain, params) => {
    const key = parsePubkey(params[0]);
    const options = config(params, 1);
    encodingOf(options, 'base58');
    const account = accountOrNull(chain, key, { ...options, encoding: options.encoding ?? 'base58' });
    // Without an encoding agave answers in its legacy "binary" form: the data as a bare base58 string.
    if (account && options.encoding === undefined) account.data = (account.data as string[])[0];
    return withContext(chain, account);
  },
  getMultipleAccounts: (chain, params) => {
    if (!Array.isArray(params[0])) throw RpcError.invalidParams('Invalid params: expected an array of pubkeys');
    if (params[0].length > MAX_MULTIPLE_ACCOUNTS) throw RpcError.invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
    const keys = params[0].map(parsePubkey);
    const options = config(params, 1);
    encodingOf(options);
    return withContext(chain, keys.map((key) => accountOrNull(chain, key, options)));
  },
  getProgramAccounts: (chain, params) => {
    const programId = parsePubkey(params[0]);
    const options = config(params, 1);
    encodingOf(options);
    checkFilters(options.filters);
    const accounts = chain
      .programAccounts(programId)
      .filter(({ account }) => matchesFilters(account.data, options.filters))
      .map(({ pubkey, account }) => ({ pubkey: pubkey.toBase58(), account: encodeAccount(chain, account, options) }));
    return options.withContext ? withContext(chain, accounts) : accounts;
  },
  getTokenAccountsByOwner: (chain, params) => {
    const owner = parsePubkey(params[0]);
    const filter = config(params, 1);
    const options = config(params, 2);
    encodingOf(options);
    return withContext(chain, tokenAccountsOf(chain, owner, filter, options));
  },
  getTokenAccountBalance: (chain, params) => {
    const account = chain.account(parsePubkey(params[0]));
    const token = account && decodeTokenAccount(account);
    if (!token) throw RpcError.invalidParams('Invalid param: not a Token account');
    const mint = chain.account(token.mint);
    return withContext(chain, uiTokenAmount(token.amount, (mint && decodeMint(mint)?.decimals) ?? 0));
  },
  getTokenSupply: (chain, params) => {
    const account = chain.account(parsePubkey(params[0]));
    const mint = account && decodeMint(account);
    if (!mint) throw RpcError.invalidParams('Invalid param: not a Token mint');
    return withContext(chain, uiTokenAmount(mint.supply, mint.decimals));
  },
  getMinimumBalanceForRentExemption: (chain, params) => Number(chain.rentExempt(integer(params[0], 'data length'))),
  getFeeForMessage: (chain, params) => {
    const wire = decodeWire(params[0], 'base64');
    let message: VersionedMessage;
    try {
      message = VersionedMessage.deserialize(wire);
    } catch {
      throw RpcError.invalidParams('Invalid params: failed to deserialize message');
    }
    if (!chain.isBlockhashValid(message.recentBlockhash)) return withContext(chain, null);
    return withContext(chain, Number(feeOf(message)));
  },
  getRecentPrioritizationFees: (chain) => {
    const slot = chain.slot;
    return Array.from({ length: Math.min(5, slot + 1) }, (_, i) => ({ slot: slot - Math.min(4, slot) + i, prioritizationFee: 0 }));
  },
  requestAirdrop: async (chain, params) => {
    const to = parsePubkey(params[0]);
    const lamports = integer(params[1], 'lamports');
    if (lamports === 0 || BigInt(lamports) > MAX_AIRDROP_LAMPORTS) throw RpcError.invalidParams('Invalid params: lamports must be between 1 and 1,000,000 SOL');
    return chain.airdrop(to, BigInt(lamports)).catch(refusal);
  },
  sendTransaction: async (chain, params) => {
    const options = config(params, 1);
    const wire = decodeWire(params[0], options.encoding);
    return chain.send(wire, { skipPreflight: options.skipPreflight === true }).catch(refusal);
  },
  simulateTransaction: (chain, params) => {
    const options = config(params, 1);
    const wire = decodeWire(params[0], options.encoding);
    const addresses: unknown = options.accounts?.addresses;
    if (addresses !== undefined && (!Array.isArray(addresses) || addresses.some((a) => typeof a !== 'string'))) {
      throw RpcError.invalidParams('Invalid params: accounts.addresses must be an array of pubkeys');
    }
    const wanted = (addresses as string[] | undefined)?.map((a) => parsePubkey(a).toBase58());
    let result;
    try {
      result = chain.simulate(wire, { sigVerify: options.sigVerify === true, replaceRecentBlockhash: options.replaceRecentBlockhash === true, accounts: wanted });
    } catch (error) {
      refusal(error);
    }
    return withContext(chain, {
      err: result.err,
      logs: result.logs,
      accounts: result.accounts?.map((a) => (a ? encodeAccount(chain, a, options.accounts) : null)) ?? null,
      unitsConsumed: result.unitsConsumed,
      returnData: result.returnData,
      // Simulation always reports inner instructions parsed or partially decoded, whatever the encoding.
      innerInstructions: options.innerInstructions === true ? parsedInnerInstructions(keysOf(wire), result.innerInstructions) : null,
      replacementBlockhash: result.replacementBlockhash,
      loadedAccountsDataSize: 0,
    });
  },
  getSignatureStatuses: (chain, params) => {
    if (!Array.isArray(params[0])) throw RpcError.invalidParams('Invalid params: expected an array of signatures');
    if (params[0].length > MAX_SIGNATURE_STATUSES) throw RpcError.invalidParams(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
    return withContext(
      chain,
      params[0].map((s) => {
        if (typeof s !== 'string') throw RpcError.invalidParams('Invalid param: Invalid');
        const record = chain.record(s);
        return record ? statusOf(record) : null;
      }),
    );
  },
  getTransaction: (chain, params) => {
    if (typeof params[0] !== 'string') throw RpcError.invalidParams('Invalid param: Invalid');
    const options = typeof params[1] === 'string' ? { encoding: params[1] } : config(params, 1);
    const encoding = options.encoding ?? 'json';
    if (!['json', 'jsonParsed', 'base64', 'base58'].includes(encoding)) throw RpcError.invalidParams(`Invalid params: unknown encoding ${encoding}`);
    const record = chain.record(params[0]);
    if (!record) return null;
    if (record.version === 0 && options.maxSupportedTransactionVersion === undefined) {
      throw new RpcError(
        -32015,
        'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
      );
    }
    const meta = encoding === 'jsonParsed' ? { ...record.meta, innerInstructions: parsedInnerInstructions(record.accountKeys, record.meta.innerInstructions) } : record.meta;
    const result: Record<string, unknown> = {
      slot: record.slot,
      blockTime: record.blockTime,
      transaction: encodeTransaction(record, encoding),
      meta,
    };
    if (options.maxSupportedTransactionVersion !== undefined) result.version = record.version;
    return result;
  },
  getSignaturesForAddress: (chain, params) => {
    const address = parsePubkey(params[0]).toBase58();
    const options = config(params, 1);
    const limit = options.limit === undefined ? 1000 : integer(options.limit, 'limit');
    if (limit < 1 || limit > 1000) throw RpcError.invalidParams('Invalid params: limit must be 1-1000');
    let records = chain.signaturesFor(address).reverse();
    if (typeof options.before === 'string') {
      const at = records.findIndex((r) => r.signature === options.before);
      records = at >= 0 ? records.slice(at + 1) : records;
    }
    if (typeof options.until === 'string') {
      const at = records.findIndex((r) => r.signature === options.until);
      if (at >= 0) records = records.slice(0, at);
    }
    return records.slice(0, limit).map((r) => ({
      signature: r.signature,
      slot: r.slot,
      err: r.meta.err,
      memo: null,
      blockTime: r.blockTime,
      confirmationStatus: 'finalized',
    }));
  },
};
