import { SolanaJSONRPCError, VersionedTransaction } from '@solana/web3.js';
import { rpcUnavailable } from '@svc/actions';
import { explorerUrl, isRpcUnreachable } from '@svc/chain';
import type { RequestOf, txSubmitBody } from '@svc/contracts';
import { Rejected } from '@svc/domain';
import type { Services } from '../services';
import type { Sent } from './transfer';

export type SubmitInput = RequestOf<typeof txSubmitBody>;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function decode(text: string): VersionedTransaction {
  const refuse = (why: string) => new Rejected('invalid_request', `transaction ${why}`, { field: 'transaction' });
  if (!BASE64.test(text)) throw refuse('must be base64');
  let transaction: VersionedTransaction;
  try {
    transaction = VersionedTransaction.deserialize(Buffer.from(text, 'base64'));
  } catch (error) {
    throw refuse(`is not a serialized VersionedTransaction (${(error as Error).message})`);
  }
  const { header, staticAccountKeys, compiledInstructions } = transaction.message;
  // A transaction nobody signs has no fee payer; one naming accounts it does not list cannot run.
  if (header.numRequiredSignatures < 1) throw refuse('names no signer: its first account pays the fee and must sign');
  const listed = staticAccountKeys.length + transaction.message.addressTableLookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
  if (compiledInstructions.some((ix) => ix.programIdIndex >= staticAccountKeys.length || ix.accountKeyIndexes.some((i) => i >= listed))) {
    throw refuse('has an instruction naming an account it does not list');
  }
  return transaction;
}

const isUnsigned = (signature: Uint8Array) => signature.every((byte) => byte === 0);

/**
 * A simulation's result, or the submitted transaction as it landed: the action it was recorded as (`submit`, or the
 * handed-out action it signed, with that action's summary as `details`).
 */
export type SubmitReply =
  | { simulated: true; executed: false; err: unknown; logs: string[]; units_consumed: number | null }
  | (Sent & { action: string; details?: Record<string, unknown> });

/**
 * POST /api/v1/tx/submit: sends a transaction the caller signed (or simulates it). Only the caller's own wallet
 * may pay the fee or sign, except for the service's own co-signatures on a transaction it handed out. A handed-out
 * transaction is recorded as the action it was handed out for; any other as a plain `submit`.
 */
export async function submitTransaction(services: Services, agentId: string, input: SubmitInput): Promise<SubmitReply> {
  const transaction = decode(input.transaction);
  const wallet = (await services.writer.read((state) => state.citizens.byId.get(agentId)))!.wallet;
  const { header, staticAccountKeys } = transaction.message;
  const feePayer = staticAccountKeys[0]?.toBase58();
  if (feePayer !== wallet) {
    throw new Rejected('invalid_request', `the fee payer must be your wallet ${wallet}, not ${feePayer ?? 'none'}`, { field: 'transaction' });
  }
  const handedOut = await services.pipeline.handedOutFor(agentId, transaction);
  const signers = staticAccountKeys.slice(0, header.numRequiredSignatures).map((key) => key.toBase58());
  const strangers = signers.filter((key) => key !== wallet);
  if (strangers.length > 0 && !handedOut) {
    throw new Rejected('invalid_request', `only your wallet may sign a submitted transaction; it also names ${strangers.join(', ')} as signers`, { field: 'transaction' });
  }
  const connection = services.chain.connection;

  if (input.simulate_only) {
    try {
      const { value } = await connection.simulateTransaction(transaction, { sigVerify: false, commitment: 'confirmed' });
      return { simulated: true, executed: false, err: value.err ?? null, logs: value.logs ?? [], units_consumed: value.unitsConsumed ?? null };
    } catch (error) {
      if (isRpcUnreachable(error)) throw rpcUnavailable(error, 'nothing was simulated, try again');
      if (!(error instanceof SolanaJSONRPCError)) throw error;
      // The RPC answered, and refused the transaction itself (it could not even be loaded to run).
      throw new Rejected('invalid_request', `the chain refused to simulate the transaction: ${(error as Error).message}`, { field: 'transaction' });
    }
  }

  if (isUnsigned(transaction.signatures[0]!)) {
    throw new Rejected('invalid_request', 'the transaction is not signed by your wallet: sign it first (or send simulate_only)', { field: 'transaction' });
  }
  let outcome;
  try {
    outcome = await services.pipeline.submit(agentId, wallet, transaction);
  } catch (error) {
    if (!(error instanceof Rejected) && isRpcUnreachable(error)) throw rpcUnavailable(error);
    throw error;
  }
  if (!outcome.executed) throw new Error('a submitted transaction came back unsent');
  return {
    executed: true,
    action: outcome.action,
    signature: outcome.signature,
    explorer: explorerUrl(outcome.signature, connection.rpcEndpoint),
    ledger: outcome.ledger,
    ...(outcome.action === 'submit' ? {} : { details: outcome.summary }),
  };
}
