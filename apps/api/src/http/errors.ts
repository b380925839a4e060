import { ChainError } from '@svc/chain';
import { Rejected } from '@svc/domain';
import { isDatabaseUnavailable } from '@svc/readmodel';

export { isDatabaseUnavailable };

/** An error that goes back to the caller in the envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** HTTP status of each error code (the spec's Errors table plus DESIGN.md's decisions): one status per code. */
const STATUS: Record<string, number> = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_pubkey: 400,
  amount_required: 400,
  insufficient: 400,
  no_balance: 400,
  send_failed: 400,
  tx_failed: 400,
  secret_in_body: 400,
  unauthorized: 401,
  self_vote: 403,
  own_bounty: 403,
  not_poster: 403,
  not_creator: 403,
  faucet_unavailable: 403,
  policy_limit: 403,
  not_found: 404,
  unknown_mint: 404,
  method_not_allowed: 405,
  handle_taken: 409,
  wallet_taken: 409,
  bounty_closed: 409,
  idempotency_conflict: 409,
  idempotency_in_progress: 409,
  action_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  upgrade_required: 426,
  daily_cap: 429,
  faucet_cap: 429,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  not_ready: 503,
  graduating: 503,
  aggregator_rejected: 502,
  treasury_unfunded: 503,
};

export function statusOf(code: string): number {
  return STATUS[code] ?? 400;
}

/** Whether the code is one of the table's: a code outside it would be answered 400 without anyone deciding so. */
export function isKnownCode(code: string): boolean {
  return Object.hasOwn(STATUS, code);
}

/** A command's refusal as HTTP: its status by code, and Retry-After when it may pass later. */
export function fromRejected(rejected: Rejected): ApiError {
  const headers: Record<string, string> = rejected.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(rejected.retryAfterSeconds) };
  return new ApiError(statusOf(rejected.code), rejected.code, rejected.message, rejected.details, headers);
}

/** The refusal an error is, as HTTP, whichever layer refused (the HTTP layer, a command, the chain side); undefined for a fault. */
export function refusalOf(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof Rejected) return fromRejected(error);
  if (error instanceof ChainError) return fromRejected(new Rejected(error.code, error.message, error.rejection.details, error.retryAfterSeconds));
  return undefined;
}

export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);
export const unauthorized = () =>
  new ApiError(401, 'unauthorized', 'a valid API key is required: send "Authorization: Bearer svc_sk_..." or "X-API-Key"');

/** Seconds a client is asked to wait when the database does not answer: a pool reconnects within one. */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

export const databaseUnavailable = () =>
  new ApiError(503, 'unavailable', 'the database does not answer right now; retry shortly (a write that was not answered 2xx may be retried with the same Idempotency-Key)', {}, {
    'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS),
  });
