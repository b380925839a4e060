export const LAMPORTS_PER_SOL = 1_000_000_000n;

/** SOL as the API speaks it (a decimal number) to lamports, rounded to the nearest lamport. */
export function solToLamports(sol: number): bigint {
  if (!Number.isFinite(sol) || sol < 0) throw new RangeError(`not a SOL amount: ${sol}`);
  const lamports = Math.round(sol * 1e9);
  if (!Number.isSafeInteger(lamports)) throw new RangeError(`SOL amount too large: ${sol}`);
  return BigInt(lamports);
}

/** Lamports to SOL for display and responses; exact below 2^53 lamports (about 9 million SOL). */
export function lamportsToSol(lamports: bigint | number): number {
  return Number(lamports) / 1e9;
}
