import { createHash } from 'node:crypto';
import { Keypair, PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { createTransferInstruction } from '@solana/spl-token';
import { ProgramError, type EmulatedProgram } from '../../apps/localnet/src/runtime/program';

/** A tiny emulated program that exercises the executor: own-account writes, PDA-signed CPIs and failures. */
export const PROBE_ID = Keypair.fromSeed(createHash('sha256').update('probe program').digest()).publicKey;
export const [COUNTER] = PublicKey.findProgramAddressSync([Buffer.from('counter')], PROBE_ID);
export const [AUTHORITY] = PublicKey.findProgramAddressSync([Buffer.from('authority')], PROBE_ID);
export const probe: EmulatedProgram = {
  programId: PROBE_ID,
  name: 'probe',
  execute(ctx) {
    const op = ctx.data[0];
    if (op === 0) return ctx.createOwned(ctx.accounts[0].pubkey, COUNTER, Buffer.alloc(8));
    if (op === 1) {
      const count = ctx.account(COUNTER)!.data.readBigUInt64LE(0) + 1n;
      const data = Buffer.alloc(8);
      data.writeBigUInt64LE(count);
      ctx.log(`count ${count}`);
      return ctx.writeOwned(COUNTER, data);
    }
    if (op === 2) throw new ProgramError(6000, 'Refused', 'refused on purpose');
    if (op === 3) {
      const [vault, destination] = ctx.accounts;
      return ctx.invokeSigned(createTransferInstruction(vault.pubkey, destination.pubkey, AUTHORITY, ctx.data.readBigUInt64LE(1)), [AUTHORITY]);
    }
    if (op === 6) return ctx.emitData(Buffer.from('0102030405060708aa', 'hex'));
    if (op === 5) {
      const [from, to] = ctx.accounts;
      return ctx.invoke(SystemProgram.transfer({ fromPubkey: from.pubkey, toPubkey: to.pubkey, lamports: 1000 }));
    }
    if (op === 4) {
      // Moving a user's lamports without the user's signature must be refused by the runtime rules.
      const [victim, thief] = ctx.accounts;
      return ctx.invokeSigned(SystemProgram.transfer({ fromPubkey: victim.pubkey, toPubkey: thief.pubkey, lamports: 1 }), [victim.pubkey]);
    }
  },
};

export const probeIx = (op: number, keys: { pubkey: PublicKey; isSigner: boolean; isWritable: boolean }[] = [], extra = Buffer.alloc(0)) =>
  new TransactionInstruction({ programId: PROBE_ID, keys, data: Buffer.concat([Buffer.from([op]), extra]) });
export const counterKeys = (payer: PublicKey) => [
  { pubkey: payer, isSigner: true, isWritable: true },
  { pubkey: COUNTER, isSigner: false, isWritable: true },
  { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
];
