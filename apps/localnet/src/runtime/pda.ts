import { PublicKey } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID } from '@solana/spl-token';

const found = new Map<string, [PublicKey, number]>();

/**
 * PublicKey.findProgramAddressSync, memoised: each bump it tries decompresses a curve point in JavaScript
 * (~0.1 ms), and the emulated programs derive the same few addresses on every trade.
 */
export function findPda(seeds: readonly (Buffer | Uint8Array)[], programId: PublicKey): [PublicKey, number] {
  const id = `${programId.toBase58()}:${seeds.map((s) => Buffer.from(s).toString('hex')).join(':')}`;
  let pda = found.get(id);
  if (!pda) {
    pda = PublicKey.findProgramAddressSync(seeds as Buffer[], programId);
    if (found.size > 100_000) found.clear();
    found.set(id, pda);
  }
  return pda;
}

/** getAssociatedTokenAddressSync(mint, owner, true, tokenProgram), memoised the same way. */
export function associatedTokenAddress(mint: PublicKey, owner: PublicKey, tokenProgram: PublicKey): PublicKey {
  return findPda([owner.toBuffer(), tokenProgram.toBuffer(), mint.toBuffer()], ASSOCIATED_TOKEN_PROGRAM_ID)[0];
}
