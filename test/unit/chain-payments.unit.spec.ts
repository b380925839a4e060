import { Keypair, SendTransactionError, SystemProgram, TransactionExpiredBlockheightExceededError, VersionedTransaction } from '@solana/web3.js';
import {
  ChainError,
  buildSolTransfer,
  encodeUnsigned,
  explorerUrl,
  keypairFromSecret,
  lamportsToSol,
  signTransaction,
  solToLamports,
  toChainError,
} from '@svc/chain';
import { awardBody, bodyValidator } from '@svc/contracts';

const recent = { blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 150 };

describe('SOL amounts', () => {
  it.each([
    [0.001, 1_000_000n],
    [0.1, 100_000_000n],
    [0.29, 290_000_000n],
    [0.123456789, 123_456_789n],
    [1000, 1_000_000_000_000n],
    [0.0000000004, 0n],
    [0.0000000006, 1n],
  ])('reads %p SOL as %p lamports, rounded to the lamport', (sol, lamports) => {
    expect(solToLamports(sol)).toBe(lamports);
  });

  it('refuses what is not an amount', () => {
    expect(() => solToLamports(-1)).toThrow(RangeError);
    expect(() => solToLamports(Number.NaN)).toThrow(RangeError);
    expect(() => solToLamports(1e10)).toThrow(RangeError);
  });

  it('writes lamports back as SOL', () => {
    expect(lamportsToSol(123_456_789n)).toBe(0.123456789);
    expect(lamportsToSol(5000)).toBe(0.000005);
  });
});

describe('a SOL transfer', () => {
  const from = Keypair.generate();
  const to = Keypair.generate().publicKey;

  it('is a v0 transaction of one System transfer, paid by the sender', () => {
    const tx = buildSolTransfer({ from: from.publicKey.toBase58(), to, lamports: 42n }, recent);
    expect(tx.version).toBe(0);
    expect(tx.message.staticAccountKeys[0]!.equals(from.publicKey)).toBe(true);
    expect(tx.message.header.numRequiredSignatures).toBe(1);
    expect(tx.message.recentBlockhash).toBe(recent.blockhash);
    const [ix] = tx.message.compiledInstructions;
    expect(tx.message.staticAccountKeys[ix!.programIdIndex]!.equals(SystemProgram.programId)).toBe(true);
    expect(() => buildSolTransfer({ from: from.publicKey, to, lamports: 0n }, recent)).toThrow(RangeError);
  });

  it('travels unsigned as base64 and signs to a signature that names it', () => {
    const tx = buildSolTransfer({ from: from.publicKey, to, lamports: 42n }, recent);
    const unsigned = VersionedTransaction.deserialize(Buffer.from(encodeUnsigned(tx), 'base64'));
    expect(unsigned.signatures[0]!.every((b) => b === 0)).toBe(true);
    const signed = signTransaction(tx, [keypairFromSecret(from.secretKey)], recent);
    expect(signed).toMatchObject({ blockhash: recent.blockhash, lastValidBlockHeight: 150 });
    const back = VersionedTransaction.deserialize(signed.wire);
    expect(back.signatures[0]).toEqual(tx.signatures[0]);
    expect(signed.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  });

  it('refuses a secret that is not a 64-byte keypair', () => {
    expect(() => keypairFromSecret(new Uint8Array(32))).toThrow(/64 bytes/);
    const tampered = Uint8Array.from(from.secretKey);
    tampered[40] ^= 1;
    expect(() => keypairFromSecret(tampered)).toThrow();
  });
});

describe('web3.js failures in our words', () => {
  const refused = (message: string, logs: string[]) => new SendTransactionError({ action: 'simulate', signature: '', transactionMessage: message, logs });

  it.each([
    ['Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1', ['Transfer: insufficient lamports 5, need 9']],
    ['Transaction simulation failed: Attempt to debit an account but found no record of a prior credit.', []],
    ['Transaction simulation failed: Insufficient funds for fee', []],
    ['Transaction simulation failed: Transaction results in an account (0) with insufficient funds for rent', []],
  ])('reads "%s" as insufficient', (message, logs) => {
    const mapped = toChainError(refused(message, logs));
    expect(mapped).toBeInstanceOf(ChainError);
    expect(mapped!.code).toBe('insufficient');
    expect(mapped!.logs).toEqual(logs);
    expect(mapped!.message).not.toMatch(/Transaction simulation failed/);
  });

  it('reads any other refusal as send_failed, with its logs in the rejection', () => {
    const logs = ['Program X invoke [1]', 'Program X failed: custom program error: 0x1771'];
    const mapped = toChainError(refused('Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1771', logs))!;
    expect(mapped.rejection).toEqual({ code: 'send_failed', message: expect.stringContaining('0x1771'), details: { logs } });
  });

  it('reads an expired blockhash as send_failed, and leaves faults of unknown outcome alone', () => {
    expect(toChainError(new TransactionExpiredBlockheightExceededError('sig'))?.code).toBe('send_failed');
    expect(toChainError(new TypeError('fetch failed'))).toBeUndefined();
    expect(toChainError(new Error('socket hang up'))).toBeUndefined();
  });

  it('carries the signature of a transaction that landed and failed', () => {
    expect(new ChainError('tx_failed', 'failed', ['log'], 'sig').rejection).toEqual({ code: 'tx_failed', message: 'failed', details: { logs: ['log'], signature: 'sig' } });
  });
});

describe('explorer links', () => {
  it('names the cluster the RPC belongs to', () => {
    expect(explorerUrl('abc', 'https://api.mainnet-beta.solana.com')).toBe('https://explorer.solana.com/tx/abc');
    expect(explorerUrl('abc', 'https://api.devnet.solana.com')).toBe('https://explorer.solana.com/tx/abc?cluster=devnet');
    expect(explorerUrl('abc', 'http://127.0.0.1:8899')).toBe('https://explorer.solana.com/tx/abc?cluster=custom&customUrl=http%3A%2F%2F127.0.0.1%3A8899');
  });
});

describe('the award body', () => {
  const validate = bodyValidator(awardBody);

  it('needs a submission id and defaults execute to true', () => {
    const body: Record<string, unknown> = { submission_id: 'sub_01ARZ3NDEKTSV4RRFFQ69G5FAV' };
    expect(validate(body)).toBeNull();
    expect(body.execute).toBe(true);
    expect(validate({})).toEqual({ field: 'submission_id', message: 'submission_id is required' });
    expect(validate({ submission_id: 'bounty_1' })).toMatchObject({ field: 'submission_id' });
    expect(validate({ submission_id: 'sub_1', execute: 'no' })).toEqual({ field: 'execute', message: 'execute must be boolean' });
  });
});
