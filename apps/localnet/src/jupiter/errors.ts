/**
 * Jupiter's error codes that this aggregator can answer with; the first eight are Jupiter's documented routing
 * and composing codes. INVALID_REQUEST stands in for the parse failures Jupiter reports without a code.
 */
export type JupiterErrorCode =
  | 'COULD_NOT_FIND_ANY_ROUTE'
  | 'ROUTE_PLAN_DOES_NOT_CONSUME_ALL_THE_AMOUNT'
  | 'TOKEN_NOT_TRADABLE'
  | 'NOT_SUPPORTED'
  | 'CIRCULAR_ARBITRAGE_IS_DISABLED'
  | 'CANNOT_COMPUTE_OTHER_AMOUNT_THRESHOLD'
  | 'MARKET_NOT_FOUND'
  | 'FAILED_TO_GET_SWAP_AND_ACCOUNT_METAS'
  | 'INVALID_REQUEST';

/** A refusal that goes back to the caller as `{ error, errorCode }`, the shape Jupiter's API answers with. */
export class JupiterError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: JupiterErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'JupiterError';
  }

  toJSON(): { error: string; errorCode: JupiterErrorCode } {
    return { error: this.message, errorCode: this.errorCode };
  }
}

export const invalidRequest = (message: string) => new JupiterError(400, 'INVALID_REQUEST', message);
