import fc from 'fast-check';
import bs58 from 'bs58';
import { Keypair, LAMPORTS_PER_SOL, Message, PublicKey, SystemProgram, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { sign } from 'node:crypto';
import { emulatedPrograms } from '../../apps/localnet/src/programs';
import { localnet, rpc, type LocalnetClient } from '../support/localnet';

const SEED = process.env.FUZZ_SEED === 'random' ? Date.now() : Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const PROGRAMS = [SystemProgram.programId, TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, ...emulatedPrograms().map((p) => p.programId), Keypair.generate().publicKey];
const ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * Structurally arbitrary but properly signed transactions: out-of-range indexes, odd headers, duplicate
 * keys, random instruction data for real and emulated programs. Every one must get a JSON-RPC answer
 * with a standard code (never an internal error), and the chain must go on serving.
 */
describe('malformed transactions never crash the local chain', () => {
  let t: LocalnetClient;
  const internal: unknown[] = [];
  const signers = Array.from({ length: 4 }, () => Keypair.generate());

  beforeAll(async () => {
    t = await localnet({ programs: emulatedPrograms(), onError: (error) => internal.push(error) });
    for (const signer of signers) {
      const signature = await t.connection.requestAirdrop(signer.publicKey, 5 * LAMPORTS_PER_SOL);
      await t.connection.confirmTransaction({ signature, ...(await t.connection.getLatestBlockhash()) });
    }
  });
  afterAll(() => t.close());

  const instruction = fc.record({
    programIdIndex: fc.nat({ max: 9 }),
    accounts: fc.array(fc.nat({ max: 9 }), { maxLength: 6 }),
    data: fc.uint8Array({ maxLength: 48 }),
  });
  const shape = fc.record({
    signerCount: fc.integer({ min: 1, max: 4 }),
    readonlySigned: fc.nat({ max: 3 }),
    readonlyUnsigned: fc.nat({ max: 6 }),
    programs: fc.array(fc.nat({ max: PROGRAMS.length - 1 }), { minLength: 1, maxLength: 3 }),
    extra: fc.nat({ max: 3 }),
    duplicate: fc.boolean(),
    instructions: fc.array(instruction, { maxLength: 4 }),
    skipPreflight: fc.boolean(),
    staleBlockhash: fc.boolean(),
  });

  test('every answer is a result or a standard JSON-RPC error', async () => {
    const { blockhash } = await t.connection.getLatestBlockhash();
    await fc.assert(
      fc.asyncProperty(shape, async (s) => {
        const keys: PublicKey[] = [
          ...signers.slice(0, s.signerCount).map((k) => k.publicKey),
          ...Array.from({ length: s.extra }, () => Keypair.generate().publicKey),
          ...s.programs.map((i) => PROGRAMS[i]),
        ];
        if (s.duplicate) keys.push(keys[0]);
        const message = new Message({
          header: { numRequiredSignatures: s.signerCount, numReadonlySignedAccounts: s.readonlySigned, numReadonlyUnsignedAccounts: s.readonlyUnsigned },
          accountKeys: keys.map((k) => k.toBase58()),
          recentBlockhash: s.staleBlockhash ? Keypair.generate().publicKey.toBase58() : blockhash,
          instructions: s.instructions.map((ix) => ({ programIdIndex: ix.programIdIndex, accounts: ix.accounts, data: bs58.encode(ix.data) })),
        });
        const bytes = message.serialize();
        const signatures = signers.slice(0, s.signerCount).map((k) => sign(null, bytes, { key: Buffer.concat([ED25519_PKCS8, k.secretKey.subarray(0, 32)]), format: 'der', type: 'pkcs8' }));
        // Serialized by hand: web3.js refuses to rebuild a transaction from a malformed message.
        const wire = Buffer.concat([Buffer.from([signatures.length]), ...signatures, bytes]);
        const reply = await rpc(t.net.rpcUrl, 'sendTransaction', [wire.toString('base64'), { encoding: 'base64', skipPreflight: s.skipPreflight }]);
        if (reply.error) expect([-32602, -32002, -32003]).toContain(reply.error.code);
        else expect(typeof reply.result).toBe('string');
        const simulated = await rpc(t.net.rpcUrl, 'simulateTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
        if (simulated.error) expect([-32602, -32003]).toContain(simulated.error.code);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(internal).toEqual([]);
    const payer = signers[0];
    await sendAndConfirmTransaction(t.connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 })), [payer]);
  }, 120_000);
});
