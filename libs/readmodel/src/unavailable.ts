/**
 * SQLSTATE classes and codes that mean the server cannot be reached, is going away, or did not answer within
 * the statement timeout (57014: e.g. a lock someone else holds), not that a query is wrong.
 */
const UNREACHABLE_SQLSTATE = /^(08|57P0[1-5]|57014|53300|53400)/;
const UNREACHABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);
// node-postgres reports a dropped or refused connection with a plain Error, by these messages.
const UNREACHABLE_MESSAGE = /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Connection terminated due to connection timeout|terminating connection due to)/;

/**
 * Whether the error (or one it wraps) says the database cannot be reached right now. A socket error counts
 * only unwrapped, as node-postgres throws it: fetch wraps its own (the Solana RPC, a doorbell, an image) in a
 * TypeError, and those are not the database.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 5 || error === null || typeof error !== 'object') return false;
  const { code, message, cause, errors } = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && (UNREACHABLE_SQLSTATE.test(code) || (depth === 0 && UNREACHABLE_ERRNO.has(code)))) return true;
  if (typeof message === 'string' && UNREACHABLE_MESSAGE.test(message)) return true;
  if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return isDatabaseUnavailable(cause, depth + 1);
}
