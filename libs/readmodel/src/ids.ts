import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

/**
 * Cryptographic randomness drawn from a pooled buffer. ulid's own PRNG asks the OS for one byte per
 * character, sixteen calls per id: a measurable share of a write request's CPU under load.
 */
function pooledRandom(): number {
  if (used === POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++]! / 256;
}

/** A ULID, monotonic within this process: what the service names the rows and things it creates with. */
export const newUlid = monotonicFactory(pooledRandom);
