import { Connection, PublicKey, type ConfirmedSignatureInfo, type VersionedTransactionResponse } from '@solana/web3.js';
import { AuditError, REQUEST_TIMEOUT_MS, RETRIES, backoff } from './http';

const SIGNATURE_PAGE = 1000;
/** Transactions asked for in one JSON-RPC batch. */
export const TRANSACTION_BATCH = 50;

/** The Solana RPC as the audit reads it: each call retried like the HTTP side, then exit 2. */
export class AuditRpc {
  private readonly connection: Connection;

  constructor(private readonly url: string) {
    this.connection = new Connection(url, {
      commitment: 'confirmed',
      fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
    });
  }

  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    let lastProblem = '';
    for (let attempt = 0; attempt <= RETRIES; attempt += 1) {
      await backoff(attempt);
      try {
        return await run();
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause;
        lastProblem = cause?.code ?? (error as Error).message;
      }
    }
    throw new AuditError(`RPC ${what} at ${this.url} failed after ${RETRIES} retries: ${lastProblem}`);
  }

  /** Every confirmed transaction that names `address`, newest first, back to its first. */
  async signaturesOf(address: string): Promise<ConfirmedSignatureInfo[]> {
    const key = new PublicKey(address);
    const all: ConfirmedSignatureInfo[] = [];
    const seen = new Set<string>();
    for (;;) {
      const before = all.at(-1)?.signature;
      const page = await this.call('getSignaturesForAddress', () => this.connection.getSignaturesForAddress(key, { before, limit: SIGNATURE_PAGE }, 'confirmed'));
      const fresh = page.filter((info) => !seen.has(info.signature));
      for (const info of fresh) seen.add(info.signature);
      all.push(...fresh);
      // An RPC that answers the same page again would otherwise keep the audit here forever.
      if (page.length < SIGNATURE_PAGE || fresh.length === 0) return all;
    }
  }

  /** One batch of transactions (at most TRANSACTION_BATCH), in order; null where the chain has none. */
  transactions(signatures: string[]): Promise<(VersionedTransactionResponse | null)[]> {
    return this.call('getTransaction', () => this.connection.getTransactions(signatures, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }));
  }
}
