import type { VersionedTransaction } from '@solana/web3.js';

export const MAX_TRANSACTION_BYTES = 1232;

/**
 * The structural checks agave makes when it sanitizes a message, before signatures or execution, so
 * that a malformed transaction is refused instead of reaching the executor. Returns the reason, or null.
 */
export function sanitizeFailure(tx: VersionedTransaction, wireLength: number): string | null {
  if (wireLength > MAX_TRANSACTION_BYTES) return `transaction too large: ${wireLength} bytes (max: ${MAX_TRANSACTION_BYTES})`;
  const message = tx.message;
  const { numRequiredSignatures, numReadonlySignedAccounts, numReadonlyUnsignedAccounts } = message.header;
  const statics = message.staticAccountKeys;
  const lookups = 'addressTableLookups' in message ? message.addressTableLookups : [];
  const total = statics.length + lookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
  if (numRequiredSignatures === 0 || numRequiredSignatures > statics.length) return 'Transaction failed to sanitize accounts offsets correctly';
  if (numReadonlySignedAccounts >= numRequiredSignatures) return 'Transaction failed to sanitize accounts offsets correctly';
  if (numReadonlyUnsignedAccounts > statics.length - numRequiredSignatures) return 'Transaction failed to sanitize accounts offsets correctly';
  if (tx.signatures.length !== numRequiredSignatures) return 'Transaction failed to sanitize accounts offsets correctly';
  if (total > 256) return 'Transaction loads too many accounts';
  for (let i = 1; i < statics.length; i++) {
    for (let j = 0; j < i; j++) if (statics[i].equals(statics[j])) return 'Account loaded twice';
  }
  for (const ix of message.compiledInstructions) {
    if (ix.programIdIndex === 0 || ix.programIdIndex >= total) return 'Transaction failed to sanitize accounts offsets correctly';
    if (ix.accountKeyIndexes.some((i) => i >= total)) return 'Transaction failed to sanitize accounts offsets correctly';
  }
  return null;
}
