import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionExpiredBlockheightExceededError,
  TransactionMessage,
  VersionedTransaction,
  type Connection,
  type TransactionError,
  type TransactionInstruction,
} from '@solana/web3.js';
import { ChainError, isAlreadyProcessed, looksInsufficient, toChainError } from './errors';
import { lamportsToSol } from './lamports';
import { signWith } from './signing';

export type WalletAddress = PublicKey | string;

/** A blockhash and the last block height at which a transaction built on it can still land. */
export interface RecentBlockhash {
  blockhash: string;
  lastValidBlockHeight: number;
}

/** A signed transaction as it is stored and sent: everything needed to resend it or to tell whether it can still land. */
export interface SignedTransaction extends RecentBlockhash {
  signature: string;
  /** The wire bytes. */
  wire: Uint8Array;
}

export type SignatureState =
  | { state: 'confirmed'; slot: number }
  | { state: 'failed'; slot: number; err: TransactionError; logs: string[] }
  /** Seen by the cluster, not yet confirmed. */
  | { state: 'processed'; slot: number }
  | { state: 'not_found' };

/**
 * Puts `reference` on the transaction as a read-only key, so it can be found with getSignaturesForAddress
 * whoever signs and sends it (as in Solana Pay). It rides on a compute-budget instruction, whose program
 * ignores accounts, so no program the action calls sees it; one is added (a zero priority price, which
 * costs nothing) when the action has none.
 */
export function withReference(instructions: TransactionInstruction[], reference: PublicKey): TransactionInstruction[] {
  const carrier = instructions.find((ix) => ix.programId.equals(ComputeBudgetProgram.programId));
  const key = { pubkey: reference, isSigner: false, isWritable: false };
  if (carrier) {
    return instructions.map((ix) => (ix === carrier ? { ...ix, keys: [...ix.keys, key] } : ix)) as TransactionInstruction[];
  }
  const price = ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 0 });
  price.keys.push(key);
  return [price, ...instructions];
}

/**
 * A fresh reference for `withReference`: 32 random bytes, since nobody ever signs for it. Keypair.generate() would
 * derive a public key in JavaScript ed25519, about a millisecond of the event loop per action.
 */
export function newReference(): PublicKey {
  return new PublicKey(randomBytes(32));
}

/** A base58 address to a PublicKey; the caller has validated it. */
export function publicKeyOf(wallet: WalletAddress): PublicKey {
  return typeof wallet === 'string' ? new PublicKey(wallet) : wallet;
}

export async function balanceLamports(connection: Connection, wallet: WalletAddress): Promise<bigint> {
  return BigInt(await connection.getBalance(publicKeyOf(wallet), 'confirmed'));
}

export async function recentBlockhash(connection: Connection): Promise<RecentBlockhash> {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
  return { blockhash, lastValidBlockHeight };
}

/**
 * A v0 transaction moving `lamports` from `from` (also the fee payer) to `to`; unsigned. A `reference` is
 * an extra read-only key on the transfer (the System program ignores it, as in Solana Pay), so that the
 * transaction can be found by getSignaturesForAddress(reference) whoever signs and sends it.
 */
export function buildSolTransfer(
  transfer: { from: WalletAddress; to: WalletAddress; lamports: bigint; reference?: WalletAddress },
  recent: RecentBlockhash,
): VersionedTransaction {
  if (transfer.lamports <= 0n) throw new RangeError('a transfer moves at least one lamport');
  const from = publicKeyOf(transfer.from);
  const instruction = SystemProgram.transfer({ fromPubkey: from, toPubkey: publicKeyOf(transfer.to), lamports: transfer.lamports });
  if (transfer.reference !== undefined) instruction.keys.push({ pubkey: publicKeyOf(transfer.reference), isSigner: false, isWritable: false });
  const message = new TransactionMessage({ payerKey: from, recentBlockhash: recent.blockhash, instructions: [instruction] }).compileToV0Message();
  return new VersionedTransaction(message);
}

/**
 * Refuses (ChainError `insufficient`) a payment the wallet cannot make: it must hold the amount plus the
 * fee, and keep either nothing or at least the rent-exempt minimum, which the runtime enforces.
 */
export async function assertCanPay(
  connection: Connection,
  wallet: WalletAddress,
  payment: { lamports: bigint; fee: bigint | Promise<bigint>; /** The balance, when the caller read it in a batch just now. */ balance?: bigint },
): Promise<{ balance: bigint }> {
  const [balance, rentMinimum, fee] = await Promise.all([payment.balance ?? balanceLamports(connection, wallet), emptyAccountRent(connection), payment.fee]);
  const needed = payment.lamports + fee;
  const sol = (lamports: bigint) => `${lamportsToSol(lamports)} SOL`;
  const parts = `${sol(payment.lamports)} + ${sol(fee)} network fee`;
  const amounts = { needed_lamports: Number(needed), available_lamports: Number(balance) };
  if (balance < needed) {
    throw new ChainError('insufficient', `the wallet ${publicKeyOf(wallet).toBase58()} holds ${sol(balance)}; this needs ${sol(needed)} (${parts})`, [], undefined, amounts);
  }
  const left = balance - needed;
  if (left > 0n && left < rentMinimum) {
    throw new ChainError(
      'insufficient',
      `the wallet ${publicKeyOf(wallet).toBase58()} holds ${sol(balance)}; paying ${sol(needed)} (${parts}) would leave ${sol(left)}, ` +
        `below the ${sol(rentMinimum)} an account must keep; add funds or leave nothing`,
      [],
      undefined,
      { ...amounts, needed_lamports: Number(needed + rentMinimum - left) },
    );
  }
  return { balance };
}

const rentOfEmpty = new WeakMap<Connection, Promise<bigint>>();

/** The rent-exempt minimum of an account with no data: a cluster constant, asked once per connection. */
function emptyAccountRent(connection: Connection): Promise<bigint> {
  let known = rentOfEmpty.get(connection);
  if (!known) {
    known = connection.getMinimumBalanceForRentExemption(0, 'confirmed').then(BigInt);
    known.catch(() => rentOfEmpty.delete(connection));
    rentOfEmpty.set(connection, known);
  }
  return known;
}

/** The base58 signature that names a transaction: its first (fee payer's) signature. */
export function signatureOf(transaction: VersionedTransaction): string {
  return bs58.encode(transaction.signatures[0]!);
}

/** Signs with every keypair given; the recent blockhash is the one the transaction was built on. */
export function signTransaction(transaction: VersionedTransaction, signers: Keypair[], recent: RecentBlockhash): SignedTransaction {
  signWith(transaction, signers);
  return { signature: signatureOf(transaction), wire: transaction.serialize(), blockhash: recent.blockhash, lastValidBlockHeight: recent.lastValidBlockHeight };
}

/** An unsigned transaction as the API hands it out (`transaction`, base64 of a VersionedTransaction). */
export function encodeUnsigned(transaction: VersionedTransaction): string {
  return Buffer.from(transaction.serialize()).toString('base64');
}

/** True once the cluster's block height has passed `lastValidBlockHeight`: a transaction built on that blockhash can no longer land. */
export async function isBlockhashExpired(connection: Connection, lastValidBlockHeight: number): Promise<boolean> {
  return (await connection.getBlockHeight('confirmed')) > lastValidBlockHeight;
}

/** Where a signature stands, searching the whole history; a failed one comes with its program logs. */
export async function signatureStatus(connection: Connection, signature: string): Promise<SignatureState> {
  const { value } = await connection.getSignatureStatus(signature, { searchTransactionHistory: true });
  if (!value) return { state: 'not_found' };
  if (value.err) return { state: 'failed', slot: value.slot, err: value.err, logs: await transactionLogs(connection, signature) };
  if (value.confirmationStatus === 'confirmed' || value.confirmationStatus === 'finalized') return { state: 'confirmed', slot: value.slot };
  return { state: 'processed', slot: value.slot };
}

export async function transactionLogs(connection: Connection, signature: string): Promise<string[]> {
  const tx = await connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
  return tx?.meta?.logMessages ?? [];
}

/**
 * The checks a fresh send gets from the RPC's preflight, run on the chain's state now for bytes signed earlier:
 * the ChainError their landing would end in (so they are not sent to pay a fee for nothing), or undefined when
 * they would succeed, or cannot be judged here (their blockhash unknown to the node, or already processed).
 */
export async function presendCheck(connection: Connection, signed: SignedTransaction): Promise<ChainError | undefined> {
  const transaction = VersionedTransaction.deserialize(signed.wire);
  const { value } = await connection.simulateTransaction(transaction, { sigVerify: false, replaceRecentBlockhash: false, commitment: 'confirmed' });
  if (value.err === null) return undefined;
  const reason = typeof value.err === 'string' ? value.err : JSON.stringify(value.err);
  if (/BlockhashNotFound|AlreadyProcessed/.test(reason)) return undefined;
  const logs = value.logs ?? [];
  const code = looksInsufficient([reason, ...logs].join('\n')) ? 'insufficient' : 'send_failed';
  return new ChainError(code, `the transaction would fail if sent now (${reason}); it was not sent, and nothing was paid`, logs);
}

export interface SendOptions {
  /**
   * Resending bytes that may already have landed: skip the simulation (which would refuse a duplicate),
   * as a validator's RPC forwards it and the leader drops it.
   */
  resend?: boolean;
  /** Stops waiting for confirmation (the transaction may still land). */
  abortSignal?: AbortSignal;
}

/**
 * Sends and waits until the signature is confirmed or its blockhash expires. Throws ChainError when the
 * outcome is known (refused, failed on-chain, expired without landing) and rethrows anything else (a
 * network fault or an abort), after which the transaction may or may not land.
 */
export async function sendAndConfirm(connection: Connection, signed: SignedTransaction, options: SendOptions = {}): Promise<{ signature: string; slot: number }> {
  try {
    await connection.sendRawTransaction(signed.wire, { skipPreflight: options.resend === true, preflightCommitment: 'confirmed', maxRetries: 0 });
  } catch (error) {
    // The same bytes went out before (someone signed and sent them): wait for them like any other send.
    if (!isAlreadyProcessed(error)) throw toChainError(error) ?? error;
  }
  return confirmSignature(connection, signed, options.abortSignal);
}

/** Sent, and seen by the cluster, but not confirmed when its blockhash expired: it may still be confirmed. */
export class OutcomeUnknownError extends Error {
  constructor(readonly signature: string) {
    super(`transaction ${signature} was processed but not confirmed when its blockhash expired; its outcome is still open`);
    this.name = 'OutcomeUnknownError';
  }
}

/** Waits for a sent transaction: confirmed, failed on-chain (tx_failed with logs) or expired (send_failed). */
export async function confirmSignature(connection: Connection, signed: Omit<SignedTransaction, 'wire'>, abortSignal?: AbortSignal): Promise<{ signature: string; slot: number }> {
  const { signature, blockhash, lastValidBlockHeight } = signed;
  let slot: number;
  try {
    const confirmed = await connection.confirmTransaction({ signature, blockhash, lastValidBlockHeight, abortSignal }, 'confirmed');
    if (confirmed.value.err) throw await failedOnChain(connection, signature, confirmed.value.err);
    slot = confirmed.context.slot;
  } catch (error) {
    if (!(error instanceof TransactionExpiredBlockheightExceededError)) throw error;
    // The block height passed before a confirmation was seen. One last look settles whether it landed.
    const status = await signatureStatus(connection, signature);
    if (status.state === 'confirmed') return { signature, slot: status.slot };
    if (status.state === 'failed') throw await failedOnChain(connection, signature, status.err, status.logs);
    // Landed but not confirmed yet: the outcome is still open.
    if (status.state === 'processed') throw new OutcomeUnknownError(signature);
    throw new ChainError('send_failed', 'the transaction expired (its blockhash is past lastValidBlockHeight) before it landed; nothing was paid');
  }
  return { signature, slot };
}

async function failedOnChain(connection: Connection, signature: string, err: TransactionError, logs?: string[]): Promise<ChainError> {
  const found = logs ?? (await transactionLogs(connection, signature));
  return new ChainError('tx_failed', `the transaction landed and failed (${JSON.stringify(err)}); only the network fee was charged`, found, signature);
}

/**
 * An RPC URL as a log line or a reply may show it: scheme, host and port. Hosted RPCs carry their key in the
 * path, the query or the credentials, so the rest is a secret.
 */
export function rpcOrigin(rpcUrl: string): string {
  return URL.canParse(rpcUrl) ? new URL(rpcUrl).origin : '[unparsable url]';
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A block explorer's page for a signature on the cluster behind `rpcUrl`. Only a local chain is named as a
 * custom cluster (by its origin alone): a remote custom URL is someone's endpoint, often with a key in it.
 */
export function explorerUrl(signature: string, rpcUrl: string): string {
  const url = URL.canParse(rpcUrl) ? new URL(rpcUrl) : undefined;
  const host = url?.hostname ?? '';
  const base = `https://explorer.solana.com/tx/${signature}`;
  if (/devnet/.test(host)) return `${base}?cluster=devnet`;
  if (/testnet/.test(host)) return `${base}?cluster=testnet`;
  if (url && LOCAL_HOSTS.has(host)) return `${base}?cluster=custom&customUrl=${encodeURIComponent(url.origin)}`;
  return base;
}
