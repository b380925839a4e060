import { AddressLookupTableProgram, ComputeBudgetProgram, PublicKey, SystemProgram, type VersionedMessage } from '@solana/web3.js';

/** Every cluster charges this per signature; the fee a node would quote adds only the priority fee. */
export const LAMPORTS_PER_SIGNATURE = 5000n;
const MAX_COMPUTE_UNITS = 1_400_000n;
/** A builtin program's default compute units (SIMD-0170); any other instruction's default is 200,000. */
const BUILTIN_UNITS = 3_000n;
const PROGRAM_UNITS = 200_000n;
const BUILTINS = new Set(
  [
    SystemProgram.programId,
    ComputeBudgetProgram.programId,
    AddressLookupTableProgram.programId,
    'Stake11111111111111111111111111111111111111',
    'Vote111111111111111111111111111111111111111',
    'Config1111111111111111111111111111111111111',
    'BPFLoaderUpgradeab1e11111111111111111111111',
    'BPFLoader2111111111111111111111111111111111',
    'Ed25519SigVerify111111111111111111111111111',
    'KeccakSecp256k11111111111111111111111111111',
  ].map((key) => new PublicKey(key).toBase58()),
);

const SET_UNIT_LIMIT = 2;
const SET_UNIT_PRICE = 3;

/**
 * The network fee of a message, computed as the cluster charges it: 5,000 lamports a signature plus the priority
 * fee, microlamports per unit times the compute-unit limit (the one it sets, or the defaults), rounded up. Asking a
 * node (getFeeForMessage) answers the same, one round trip later, for every action.
 */
export function messageFee(message: VersionedMessage): bigint {
  const keys = message.staticAccountKeys;
  let price = 0n;
  let limit: bigint | undefined;
  let defaults = 0n;
  for (const ix of message.compiledInstructions) {
    // A program is always a static key: lookup tables cannot hold one.
    const program = keys[ix.programIdIndex];
    defaults += program && BUILTINS.has(program.toBase58()) ? BUILTIN_UNITS : PROGRAM_UNITS;
    if (!program?.equals(ComputeBudgetProgram.programId)) continue;
    const data = Buffer.from(ix.data);
    if (data[0] === SET_UNIT_LIMIT && data.length >= 5) limit = BigInt(data.readUInt32LE(1));
    if (data[0] === SET_UNIT_PRICE && data.length >= 9) price = data.readBigUInt64LE(1);
  }
  const units = (limit ?? defaults) > MAX_COMPUTE_UNITS ? MAX_COMPUTE_UNITS : (limit ?? defaults);
  return LAMPORTS_PER_SIGNATURE * BigInt(message.header.numRequiredSignatures) + (price * units + 999_999n) / 1_000_000n;
}
