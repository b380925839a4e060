import { SendTransactionError } from '@solana/web3.js';

/**
 * What a caller of the service must fix or know about an on-chain failure:
 * - `insufficient`: the paying wallet cannot cover the amount, the fee or the rent it must keep;
 * - `send_failed`: the RPC refused the transaction (preflight) or it expired; nothing landed;
 * - `tx_failed`: it landed and failed; only the fee was charged.
 */
export type ChainErrorCode = 'insufficient' | 'send_failed' | 'tx_failed';

export class ChainError extends Error {
  constructor(
    readonly code: ChainErrorCode,
    message: string,
    readonly logs: string[] = [],
    /** Set when the transaction landed (tx_failed), so the caller can look it up. */
    readonly signature?: string,
    /** More facts for the caller, e.g. the lamports needed and available of `insufficient`. */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ChainError';
  }

  /** The shape of a domain rejection, so the API maps it like any other (`logs` joins the error envelope). */
  get rejection(): { code: ChainErrorCode; message: string; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, details: { ...this.extra, logs: this.logs, ...(this.signature ? { signature: this.signature } : {}) } };
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
