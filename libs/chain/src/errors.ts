import { SendTransactionError, SolanaJSONRPCError } from '@solana/web3.js';

/**
 * What a caller of the service must fix or know about the chain:
 * - `insufficient`: the paying wallet cannot cover the amount, the fee or the rent it must keep;
 * - `send_failed`: the RPC refused the transaction (preflight) or it expired; nothing landed;
 * - `tx_failed`: it landed and failed; only the fee was charged;
 * - `invalid_request`, `invalid_pubkey`, `unknown_mint`, `no_balance`: what was asked cannot be done on this chain;
 * - `unavailable`: a service the chain side depends on (the aggregator) did not answer; nothing was sent;
 * - `graduating`: the coin's bonding curve is complete and its PumpSwap pool does not exist yet: nothing trades it
 *   until the migration lands;
 * - `aggregator_rejected`: a transaction the aggregator built failed the checks before signing; nothing was signed.
 */
export type ChainErrorCode = 'insufficient' | 'send_failed' | 'tx_failed' | 'invalid_request' | 'invalid_pubkey' | 'unknown_mint' | 'no_balance' | 'unavailable' | 'graduating' | 'aggregator_rejected';

/**
 * The chain side's own refusal; whoever answers the caller (the action pipeline, a route) turns it into theirs.
 * One about a transaction carries its program logs (and its signature once it landed).
 */
export class ChainError extends Error {
  /** Refused before any transaction was built (`refusal`): there are no logs to carry. */
  private beforeTransaction = false;

  constructor(
    readonly code: ChainErrorCode,
    message: string,
    readonly logs: string[] = [],
    /** Set when the transaction landed (tx_failed), so the caller can look it up. */
    readonly signature?: string,
    /** More facts for the caller, e.g. the lamports needed and available of `insufficient`, or the field at fault. */
    readonly extra: Record<string, unknown> = {},
    /** Set when asking again later may succeed. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ChainError';
  }

  /** A refusal of what was asked, before any transaction: no logs, no signature. */
  static refusal(code: ChainErrorCode, message: string, extra: Record<string, unknown> = {}, retryAfterSeconds?: number): ChainError {
    const error = new ChainError(code, message, [], undefined, extra, retryAfterSeconds);
    error.beforeTransaction = true;
    return error;
  }

  /** The shape of a domain rejection, so the API maps it like any other. */
  get rejection(): { code: ChainErrorCode; message: string; details: Record<string, unknown> } {
    const transaction = this.beforeTransaction ? {} : { logs: this.logs, ...(this.signature ? { signature: this.signature } : {}) };
    return { code: this.code, message: this.message, details: { ...this.extra, ...transaction } };
  }
}

// The runtime's and the System program's words for a payer that cannot pay (agave and the local chain alike).
const INSUFFICIENT = [
  /insufficient lamports/i,
  /insufficient funds/i,
  /Attempt to debit an account but found no record of a prior credit/i,
  /results in an account \(\d+\) with insufficient funds for rent/i,
];

export function looksInsufficient(text: string): boolean {
  return INSUFFICIENT.some((pattern) => pattern.test(text));
}

/** The message web3.js wraps around the RPC's reason, without its "Simulation failed." preamble and logs. */
function reasonOf(error: SendTransactionError): string {
  const message = error.transactionError.message || error.message;
  return message.replace(/^Transaction simulation failed:\s*/i, '').trim();
}

/** The RPC refused a send because these very bytes already landed (or are landing): not a refusal at all. */
export function isAlreadyProcessed(error: unknown): boolean {
  return error instanceof SendTransactionError && /already been processed|AlreadyProcessed/i.test([error.message, error.transactionError?.message ?? ''].join('\n'));
}

/**
 * Our reading of a web3.js failure, or undefined when it does not say what became of the transaction (a
 * network fault, a timeout, an expiry seen without a last status check), in which case whether anything
 * landed is unknown and the caller must not assume.
 */
export function toChainError(error: unknown): ChainError | undefined {
  if (error instanceof ChainError) return error;
  if (error instanceof SendTransactionError && !isAlreadyProcessed(error)) {
    const logs = error.logs ?? error.transactionError.logs ?? [];
    const reason = reasonOf(error);
    if (looksInsufficient([reason, ...logs].join('\n'))) {
      return new ChainError('insufficient', `the paying wallet cannot cover this transaction: ${reason}`, logs);
    }
    return new ChainError('send_failed', `the transaction was refused before it landed: ${reason}`, logs);
  }
  return undefined;
}

/**
 * The RPC (or the network to it) failed before anything could be sent: nothing was paid, and the caller
 * may try again later. web3.js wraps fetch's failures in plain Errors, so the codes are read from the text
 * and the cause chain.
 */
export function isRpcUnreachable(error: unknown): boolean {
  const texts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    texts.push(e.message, String((e as { code?: unknown }).code ?? ''));
  }
  return /fetch failed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|socket hang up|network|\b(429|502|503|504)\b|Too Many Requests|Service Unavailable|Bad Gateway|Gateway Time-?out/i.test(texts.join('\n'));
}

/** An RPC answer to `method` that is not its documented result (`why`, when known): refused as the RPC's own internal error. */
export function malformedRpcAnswer(method: string, why?: string): SolanaJSONRPCError {
  return new SolanaJSONRPCError(
    { code: -32603, message: `the RPC answered ${method} with something other than its documented result${why ? `: ${why}` : ''}` },
    'unexpected RPC reply',
  );
}
