import { PublicKey } from '@solana/web3.js';

/** Derivations remembered; the least recently used go first. */
const REMEMBERED = 20_000;

let installed = false;

/**
 * Remembers program-derived addresses. Deriving one tries bump seeds until a hash falls off the ed25519
 * curve, and each try is a curve check (a field square root); a trade's SDK build and the accounts it reads
 * derive about fifteen, measured at about 4 ms of CPU per curve buy. The result depends only on the seeds and
 * the program, so the SDKs' own calls (which no option reaches) go through this cache too.
 */
export function rememberProgramAddresses(): void {
  if (installed) return;
  installed = true;
  const derive = PublicKey.findProgramAddressSync.bind(PublicKey);
  const known = new Map<string, [PublicKey, number]>();
  PublicKey.findProgramAddressSync = (seeds: Array<Buffer | Uint8Array>, programId: PublicKey): [PublicKey, number] => {
    const key = `${programId.toBase58()}:${seeds.map((seed) => Buffer.from(seed).toString('base64')).join(':')}`;
    const hit = known.get(key);
    if (hit) {
      known.delete(key);
      known.set(key, hit);
      return [hit[0], hit[1]];
    }
    const found = derive(seeds, programId);
    known.set(key, [found[0], found[1]]);
    if (known.size > REMEMBERED) known.delete(known.keys().next().value!);
    return found;
  };
}
