import bs58 from 'bs58';
import { PublicKey, SolanaJSONRPCError, type Connection, type TransactionInstruction } from '@solana/web3.js';
import {
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  unpackAccount,
  unpackMint,
} from '@solana/spl-token';
import { ChainError, malformedRpcAnswer } from './errors';

export const TOKEN_PROGRAMS: readonly PublicKey[] = [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID];

const U64_MAX = (1n << 64n) - 1n;
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** The digits of a positive finite number as JavaScript prints it (its shortest round-trip form), exponent expanded. */
function decimalDigits(amount: number): { whole: string; fraction: string } {
  const [mantissa, exponentText] = String(amount).split('e');
  const [intPart, fracPart = ''] = mantissa!.split('.');
  let digits = intPart! + fracPart;
  let point = intPart!.length + Number(exponentText ?? 0);
  if (point < 1) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  }
  digits = digits.padEnd(point, '0');
  return { whole: digits.slice(0, point), fraction: digits.slice(point).replace(/0+$/, '') };
}

function checkDecimals(decimals: number): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255) throw new RangeError(`a mint has 0-255 decimals, not ${decimals}`);
}

/**
 * Whole (UI) units to base units, exactly: 4.35 with 2 decimals is 435, where 4.35 * 100 is 434.99999999999994.
 * The amount is read as the decimal JavaScript prints for it (what the client's JSON said, as far as a double
 * can say it), so nothing is lost to binary multiplication. Refuses (400 invalid_request, field `amount`) an
 * amount that is not a positive finite number, has more decimal places than the mint, or exceeds a u64.
 */
export function uiToRaw(amount: number, decimals: number): bigint {
  checkDecimals(decimals);
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0) {
    throw ChainError.refusal('invalid_request', 'amount must be a positive number', { field: 'amount' });
  }
  const { whole, fraction } = decimalDigits(amount);
  if (fraction.length > decimals) {
    throw ChainError.refusal('invalid_request', `amount has ${fraction.length} decimal places; this mint has ${decimals}`, { field: 'amount' });
  }
  const raw = BigInt(whole + fraction.padEnd(decimals, '0'));
  if (raw > U64_MAX) throw ChainError.refusal('invalid_request', 'amount is larger than any token balance can be (a u64 of base units)', { field: 'amount' });
  return raw;
}

/** Base units to whole (UI) units: the nearest double to the exact decimal. */
export function rawToUi(raw: bigint, decimals: number): number {
  checkDecimals(decimals);
  if (raw < 0n) throw new RangeError('a token amount is never negative');
  if (decimals === 0) return Number(raw);
  const digits = raw.toString().padStart(decimals + 1, '0');
  return Number(`${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`);
}

/** A base58 public key (32 bytes; on or off the curve) from a request field; 400 invalid_pubkey naming `field` otherwise. */
export function parsePublicKey(text: unknown, field: string): PublicKey {
  const refuse = () => ChainError.refusal('invalid_pubkey', `${field} must be a base58 Solana public key (32 bytes)`, { field });
  if (typeof text !== 'string' || text.length > 44 || !BASE58.test(text)) throw refuse();
  const bytes = bs58.decode(text);
  if (bytes.length !== 32) throw refuse();
  return new PublicKey(bytes);
}

export interface MintInfo {
  /** SPL Token or Token-2022: the program that owns the mint, and so every token account of it. */
  programId: PublicKey;
  decimals: number;
  /** Base units in circulation. */
  supply: bigint;
}

/** The mint's program, decimals and supply; 404 unknown_mint when `mint` is not an initialized mint of either token program. */
export async function mintInfo(connection: Connection, mint: PublicKey): Promise<MintInfo> {
  const info = await connection.getAccountInfo(mint, 'confirmed');
  const programId = info && TOKEN_PROGRAMS.find((program) => program.equals(info.owner));
  const unknown = () => ChainError.refusal('unknown_mint', `${mint.toBase58()} is not a token mint on this chain`, { mint: mint.toBase58() });
  if (!info || !programId) throw unknown();
  let state: ReturnType<typeof unpackMint>;
  try {
    state = unpackMint(mint, info, programId);
  } catch {
    // A token account or multisig of the token program: an account, but not a mint.
    throw unknown();
  }
  if (!state.isInitialized) throw unknown();
  return { programId, decimals: state.decimals, supply: state.supply };
}

export interface TokenTransfer {
  /** Signs and pays: the tokens leave its associated token account, and it pays the rent of one created for `to`. */
  owner: PublicKey;
  /** The recipient wallet (not a token account). */
  to: PublicKey;
  mint: PublicKey;
  /** From mintInfo: the associated token account's address and the instructions depend on it. */
  programId: PublicKey;
  decimals: number;
  /** Base units; see uiToRaw. */
  raw: bigint;
}

/**
 * Moves `raw` base units from the owner's associated token account to the recipient's, creating the
 * recipient's first (the idempotent create: a no-op when it exists, so the transaction does not fail if
 * someone creates it in between). transferChecked makes the token program check the mint and decimals too.
 * Refuses (400 invalid_pubkey, field `to`) an off-curve recipient: no one can sign for such an owner, and
 * it is most often a token account pasted where a wallet belongs, so tokens sent there would be lost.
 */
export function tokenTransferInstructions(transfer: TokenTransfer): TransactionInstruction[] {
  const { owner, to, mint, programId, decimals, raw } = transfer;
  if (raw <= 0n) throw new RangeError('a transfer moves at least one base unit');
  if (!PublicKey.isOnCurve(to.toBytes())) {
    throw ChainError.refusal('invalid_pubkey', `${to.toBase58()} is not a wallet that can hold tokens (it is off the ed25519 curve, e.g. a token account or a program address)`, { field: 'to' });
  }
  const source = getAssociatedTokenAddressSync(mint, owner, true, programId);
  const destination = getAssociatedTokenAddressSync(mint, to, false, programId);
  return [
    createAssociatedTokenAccountIdempotentInstruction(owner, destination, to, mint, programId),
    createTransferCheckedInstruction(source, mint, destination, owner, raw, decimals, [], programId),
  ];
}

/** Base units of `mint` in the owner's associated token account; 0n when it does not exist. */
export async function tokenBalanceRaw(connection: Connection, owner: PublicKey, mint: PublicKey, programId: PublicKey): Promise<bigint> {
  const address = getAssociatedTokenAddressSync(mint, owner, true, programId);
  const info = await connection.getAccountInfo(address, 'confirmed');
  return info ? unpackAccount(address, info, programId).amount : 0n;
}

export interface TokenHolding {
  /** The token account. */
  account: string;
  mint: string;
  /** SPL Token or Token-2022, base58. */
  programId: string;
  /** Base units. */
  raw: bigint;
  decimals: number;
  /** Whole units as the chain's parser reports them (a Token-2022 interest or scaling extension applied). */
  uiAmount: number;
}

export interface WalletHoldings {
  lamports: bigint;
  /** Every token account the wallet owns under either token program, empty ones included. */
  tokens: TokenHolding[];
}

const RPC_TIMEOUT_MS = 10_000;

/**
 * The wallet's lamports and all its token accounts in one HTTP round trip: a JSON-RPC batch of getBalance
 * and getTokenAccountsByOwner (jsonParsed, as web3.js's getParsedTokenAccountsByOwner sends it) for each
 * token program. Throws what isRpcUnreachable recognises when the RPC cannot be reached, and a
 * SolanaJSONRPCError when it answers with an error or a reply that is not a batch reply.
 */
export async function walletHoldings(
  connection: Connection,
  owner: PublicKey,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): Promise<WalletHoldings> {
  const wallet = owner.toBase58();
  const config = { encoding: 'jsonParsed', commitment: 'confirmed' };
  const calls = [
    { method: 'getBalance', params: [wallet, { commitment: 'confirmed' }] },
    ...TOKEN_PROGRAMS.map((program) => ({ method: 'getTokenAccountsByOwner', params: [wallet, { programId: program.toBase58() }, config] })),
  ];
  const [balance, ...byProgram] = await rpcBatch(connection.rpcEndpoint, calls, options);
  const lamports = (balance as { value?: unknown })?.value;
  if (typeof lamports !== 'number') throw malformedRpcAnswer('getBalance');
  const tokens: TokenHolding[] = [];
  byProgram.forEach((result, i) => {
    const accounts = (result as { value?: unknown })?.value;
    if (!Array.isArray(accounts)) throw malformedRpcAnswer('getTokenAccountsByOwner');
    for (const entry of accounts as Array<{ pubkey?: unknown; account?: { data?: { parsed?: { info?: ParsedTokenAccount } } } }>) {
      const info = entry?.account?.data?.parsed?.info;
      const amount = info?.tokenAmount;
      if (typeof entry?.pubkey !== 'string' || typeof info?.mint !== 'string' || typeof amount?.amount !== 'string' || !/^\d+$/.test(amount.amount) || typeof amount.decimals !== 'number') {
        throw malformedRpcAnswer('getTokenAccountsByOwner');
      }
      const raw = BigInt(amount.amount);
      tokens.push({
        account: entry.pubkey,
        mint: info.mint,
        programId: TOKEN_PROGRAMS[i]!.toBase58(),
        raw,
        decimals: amount.decimals,
        uiAmount: typeof amount.uiAmountString === 'string' ? Number(amount.uiAmountString) : rawToUi(raw, amount.decimals),
      });
    }
  });
  return { lamports: BigInt(lamports), tokens };
}

interface ParsedTokenAccount {
  mint?: unknown;
  tokenAmount?: { amount?: unknown; decimals?: unknown; uiAmountString?: unknown };
}

/** One POST carrying every call (JSON-RPC 2.0 batch); the results in the order of `calls`. */
async function rpcBatch(endpoint: string, calls: Array<{ method: string; params: unknown[] }>, options: { fetch?: typeof fetch; timeoutMs?: number }): Promise<unknown[]> {
  const timeoutMs = options.timeoutMs ?? RPC_TIMEOUT_MS;
  let response: Response;
  let text = '';
  try {
    response = await (options.fetch ?? fetch)(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(calls.map((call, id) => ({ jsonrpc: '2.0', id, ...call }))),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (response.ok) text = await response.text();
    else await response.body?.cancel();
  } catch (error) {
    // Rethrown as our own Error with the network code on it, which is what isRpcUnreachable (and a caller's
    // retry) reads: fetch's own errors name the code only on their cause, and a timeout names none.
    const failure = error as { name?: unknown; message?: unknown; code?: unknown; cause?: { code?: unknown } };
    if (failure?.name === 'TimeoutError') {
      throw Object.assign(new Error(`the Solana RPC did not answer within ${timeoutMs / 1000} s`, { cause: error }), { code: 'ETIMEDOUT' });
    }
    throw Object.assign(new Error(`the Solana RPC could not be reached: ${String(failure?.message ?? error)}`, { cause: error }), { code: failure?.code ?? failure?.cause?.code });
  }
  if (!response.ok) throw new Error(`the Solana RPC answered HTTP ${response.status} ${response.statusText}`.trim());
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!Array.isArray(body)) {
    // RPC providers that refuse batches answer with one error object.
    const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const message = typeof error?.message === 'string' ? error.message : 'the reply to a batch request was not a batch';
    throw new SolanaJSONRPCError({ code: error?.code ?? -32603, message }, 'JSON-RPC batch refused');
  }
  const replies = new Map<unknown, { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } }>(body.map((reply) => [reply?.id, reply]));
  return calls.map((call, id) => {
    const reply = replies.get(id);
    if (!reply) throw new SolanaJSONRPCError({ code: -32603, message: `no reply to ${call.method} in the batch` }, 'unexpected RPC reply');
    if (reply.error) {
      throw new SolanaJSONRPCError({ code: reply.error.code, message: String(reply.error.message ?? 'error'), data: reply.error.data }, `failed to ${call.method}`);
    }
    return reply.result;
  });
}
