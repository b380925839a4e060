import { ChainError, isRpcUnreachable, toChainError } from '@svc/chain';
import { Rejected } from '@svc/domain';
import type { OutboxError } from '@svc/vault';

/** The RPC could not be reached; `what` says what that means for the action. */
export function rpcUnavailable(error: unknown, what = 'nothing was sent, try again'): Rejected {
  return new Rejected('unavailable', `the Solana RPC could not be reached (${(error as Error).message}); ${what}`, {}, 5);
}

export function unsettled(signature: string, why: string): Rejected {
  return new Rejected(
    'unavailable',
    `the transaction ${signature} was sent but ${why}; it is recorded automatically once it confirms, or marked failed if it never lands`,
    { signature },
    5,
  );
}

export function rejectedOf(error: OutboxError): Rejected {
  return new Rejected(error.code, error.message, error.details ?? {});
}

/** The chain side's refusal as the domain's, which every transport answers. */
export function rejectedOfChain(error: ChainError): Rejected {
  return new Rejected(error.code, error.message, error.rejection.details, error.retryAfterSeconds);
}

export function chainFailure(error: ChainError): OutboxError {
  return { code: error.code, message: error.message, details: error.rejection.details };
}

export function neverLanded(): ChainError {
  return new ChainError('send_failed', 'the transaction expired (its blockhash passed lastValidBlockHeight) before it landed; nothing was paid');
}

/** Errors before anything was sent: what the chain said, an unreachable RPC, or our own fault (500). */
export function beforeSend(error: unknown): unknown {
  const known = toChainError(error);
  if (known) return rejectedOfChain(known);
  if (!(error instanceof Rejected) && isRpcUnreachable(error)) return rpcUnavailable(error);
  return error;
}

/**
 * A promise started early and awaited later: its rejection is marked handled now, so an await that never
 * comes (an earlier step failed) is not an unhandled rejection; whoever awaits it still gets the error.
 */
export function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
