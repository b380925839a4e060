import {
  Connection,
  PublicKey,
  SolanaJSONRPCError,
  type AccountInfo,
  type Commitment,
  type GetMultipleAccountsConfig,
  type RpcResponseAndContext,
  type SignatureStatus,
  type SignatureStatusConfig,
  type TransactionConfirmationStatus,
} from '@solana/web3.js';
import { malformedRpcAnswer } from './errors';

/** A JSON-RPC answer as the RPC sent it, before any checking. */
export interface RawRpcReply {
  error?: { code: unknown; message: string; data?: unknown };
  result?: unknown;
}

/** A Connection's own JSON-RPC transport (its endpoint, headers and fetch), which its type declarations leave out. */
export function rawRpc(connection: Connection): (method: string, args: unknown[]) => Promise<RawRpcReply> {
  const transport: unknown = Reflect.get(connection, '_rpcRequest');
  if (typeof transport !== 'function') throw new Error('this @solana/web3.js Connection has no _rpcRequest to send a raw JSON-RPC request through');
  return (method, args) => transport.call(connection, method, args);
}

/** The `{context: {slot}, value: [...]}` of an answer to `method` about `count` items, or the RPC's own error (`failed` leads its message). */
export function listAnswer(method: string, reply: RawRpcReply, count: number, failed: string): { slot: number; value: unknown[] } {
  if (reply.error) throw new SolanaJSONRPCError(reply.error, failed);
  const { context, value } = (reply.result ?? {}) as { context?: { slot?: unknown }; value?: unknown };
  if (typeof context?.slot !== 'number') throw malformedRpcAnswer(method, 'no context.slot');
  if (!Array.isArray(value) || value.length !== count) throw malformedRpcAnswer(method, `${Array.isArray(value) ? value.length : 'no'} answers for ${count} asked`);
  return { slot: context.slot, value };
}

function accountOf(raw: unknown, at: number): AccountInfo<Buffer> | null {
  if (raw === null) return null;
  const { executable, owner, lamports, data, rentEpoch } = (raw ?? {}) as Record<string, unknown>;
  const method = 'getMultipleAccounts';
  if (typeof executable !== 'boolean' || typeof lamports !== 'number' || typeof rentEpoch !== 'number' || typeof owner !== 'string') {
    throw malformedRpcAnswer(method, `account ${at} lacks executable, lamports, rentEpoch or owner`);
  }
  if (!Array.isArray(data) || data.length !== 2 || typeof data[0] !== 'string' || data[1] !== 'base64') throw malformedRpcAnswer(method, `account ${at}'s data is not [base64, "base64"]`);
  let ownerKey: PublicKey;
  try {
    ownerKey = new PublicKey(owner);
  } catch {
    throw malformedRpcAnswer(method, `account ${at}'s owner is not a public key`);
  }
  // As web3.js answers it: what the RPC adds (`space`) stays.
  return { ...(raw as object), executable, owner: ownerKey, lamports, data: Buffer.from(data[0], 'base64'), rentEpoch };
}

const CONFIRMATION_STATUSES: ReadonlySet<unknown> = new Set<TransactionConfirmationStatus>(['processed', 'confirmed', 'finalized']);

function signatureStatusOf(raw: unknown, at: number): SignatureStatus | null {
  if (raw === null) return null;
  const { slot, confirmations, err, confirmationStatus } = (raw ?? {}) as Record<string, unknown>;
  const method = 'getSignatureStatuses';
  if (typeof slot !== 'number') throw malformedRpcAnswer(method, `status ${at} has no slot`);
  if (confirmations !== null && typeof confirmations !== 'number') throw malformedRpcAnswer(method, `status ${at}'s confirmations are neither a number nor null`);
  if (err !== null && typeof err !== 'string' && typeof err !== 'object') throw malformedRpcAnswer(method, `status ${at}'s err is neither an error nor null`);
  if (confirmationStatus !== undefined && !CONFIRMATION_STATUSES.has(confirmationStatus)) throw malformedRpcAnswer(method, `status ${at}'s confirmationStatus is ${String(confirmationStatus)}`);
  // As web3.js answers it: what the RPC adds (the old `status` field) stays.
  return raw as SignatureStatus;
}

/**
 * The service's Connection: web3.js's, except that the answers every trade and every confirmation reads are checked
 * and decoded here. web3.js checks them with superstruct twice over: the second pass re-runs each coercion on values
 * the first already converted, and builds a StructError (stack trace, and a message printing the value) for every
 * owner key, data field, null error and confirmation status, only to throw it away. On a curve buy that was more CPU
 * than the market read's own transport. Calls with options this does not decode go to web3.js as before.
 */
export class ServiceConnection extends Connection {
  override async getMultipleAccountsInfoAndContext(
    publicKeys: PublicKey[],
    commitmentOrConfig?: Commitment | GetMultipleAccountsConfig,
  ): Promise<RpcResponseAndContext<(AccountInfo<Buffer> | null)[]>> {
    const config = typeof commitmentOrConfig === 'string' ? { commitment: commitmentOrConfig } : (commitmentOrConfig ?? {});
    if (Object.keys(config).some((option) => option !== 'commitment')) return super.getMultipleAccountsInfoAndContext(publicKeys, commitmentOrConfig);
    const names = publicKeys.map((key) => key.toBase58());
    const commitment = config.commitment ?? this.commitment;
    const reply = await rawRpc(this)('getMultipleAccounts', [names, { encoding: 'base64', ...(commitment ? { commitment } : {}) }]);
    const { slot, value } = listAnswer('getMultipleAccounts', reply, names.length, `failed to get info for accounts ${names}`);
    return { context: { slot }, value: value.map(accountOf) };
  }

  override async getSignatureStatuses(signatures: string[], config?: SignatureStatusConfig): Promise<RpcResponseAndContext<(SignatureStatus | null)[]>> {
    const reply = await rawRpc(this)('getSignatureStatuses', config ? [signatures, config] : [signatures]);
    const { slot, value } = listAnswer('getSignatureStatuses', reply, signatures.length, 'failed to get signature status');
    return { context: { slot }, value: value.map(signatureStatusOf) };
  }
}
