import { ComputeBudgetProgram, Keypair, SystemProgram, TransactionMessage, VersionedTransaction, type TransactionInstruction } from '@solana/web3.js';
import { messageHash, sameAction } from '@svc/actions';
import { withReference } from '@svc/chain';
import { GivenLedger } from '../support/ledgerModel';

const NOON = Date.UTC(2026, 10, 25, 12, 0, 0);
const payer = Keypair.generate().publicKey;
const to = Keypair.generate().publicKey;
const reference = Keypair.generate().publicKey;

function message(instructions: TransactionInstruction[], recentBlockhash = 'GfVcyD4kkTrj4bKc7WA9sZCin9JDbdT4Zkd3EittNR1W') {
  return new VersionedTransaction(new TransactionMessage({ payerKey: payer, recentBlockhash, instructions }).compileToV0Message()).message;
}
const pay = (lamports: number) => SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports });

describe('handing a transaction out and knowing it again', () => {
  it('puts the reference on a compute-budget instruction, never on one the action calls', () => {
    const plain = withReference([pay(5)], reference);
    expect(plain).toHaveLength(2);
    expect(plain[0]!.programId.equals(ComputeBudgetProgram.programId)).toBe(true);
    expect(plain[0]!.keys).toEqual([{ pubkey: reference, isSigner: false, isWritable: false }]);
    expect(plain[1]!.keys.map((k) => k.pubkey.toBase58())).toEqual([payer.toBase58(), to.toBase58()]);

    // A priority fee already there carries it: a second compute-budget instruction of one kind would fail the transaction.
    const price = ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1000 });
    const priced = withReference([price, pay(5)], reference);
    expect(priced).toHaveLength(2);
    expect(priced[0]!.keys).toEqual([{ pubkey: reference, isSigner: false, isWritable: false }]);
    expect(price.keys).toEqual([]);
  });

  it('recognises the same action signed with another priority fee or blockhash, and nothing else', () => {
    const handedOut = message(withReference([pay(5)], reference));
    expect(sameAction(handedOut, message(withReference([pay(5)], reference)))).toBe(true);
    expect(sameAction(handedOut, message([ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 7 }), pay(5)], 'So11111111111111111111111111111111111111112'))).toBe(true);
    // Another amount, another recipient, an extra instruction, or another payer is another action.
    expect(sameAction(handedOut, message(withReference([pay(6)], reference)))).toBe(false);
    expect(sameAction(handedOut, message(withReference([SystemProgram.transfer({ fromPubkey: payer, toPubkey: reference, lamports: 5 })], reference)))).toBe(false);
    expect(sameAction(handedOut, message(withReference([pay(5), pay(1)], reference)))).toBe(false);
    const other = Keypair.generate().publicKey;
    const foreign = new VersionedTransaction(
      new TransactionMessage({ payerKey: other, recentBlockhash: handedOut.recentBlockhash, instructions: [SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 5 })] }).compileToV0Message(),
    ).message;
    expect(sameAction(handedOut, foreign)).toBe(false);
  });

  it('names a message by the hash of its bytes: stable, and different for any change', () => {
    const a = message([pay(5)]);
    expect(messageHash(a)).toBe(messageHash(message([pay(5)])));
    expect(messageHash(a)).not.toBe(messageHash(message([pay(6)])));
    expect(messageHash(a)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('RecordAction', () => {
  const data = (signature: string, wallet = 'W1') => ({ action: 'transfer' as const, signature, wallet, details: { to: 'W2', amount: 1, mint: null, memo: null } });

  it('records a confirmed action once per signature, however often recovery or a retry reports it', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    const [entry] = given.accept({ type: 'RecordAction', agentId: alice, data: data('sig1') });
    expect(entry).toMatchObject({ type: 'ActionRecorded', actor: alice, data: { action: 'transfer', signature: 'sig1', wallet: 'W1' } });
    expect(given.state.actions.bySignature.get('sig1')).toBe(entry!.seq);
    expect(given.decide({ type: 'RecordAction', agentId: alice, data: data('sig1') })).toEqual({ ok: true, events: [] });
  });

  it('refuses an action of a wallet that is not the citizen’s, or of no citizen', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    given.citizen(2);
    expect(given.decide({ type: 'RecordAction', agentId: alice, data: data('sig2', 'W2') })).toMatchObject({ ok: false, rejection: { code: 'invalid_request' } });
    expect(given.decide({ type: 'RecordAction', agentId: 'agent_9', data: data('sig3') })).toMatchObject({ ok: false, rejection: { code: 'not_found' } });
  });
});
