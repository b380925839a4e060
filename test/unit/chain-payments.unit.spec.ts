import { Keypair, SendTransactionError, SystemProgram, TransactionExpiredBlockheightExceededError, TransactionMessage, VersionedTransaction, type Connection } from '@solana/web3.js';
import {
  ChainError,
  OutcomeUnknownError,
  SolanaChain,
  WRAPPED_SOL_MINT,
  buildSolTransfer,
  confirmSignature,
  encodeUnsigned,
  explorerUrl,
  rpcOrigin,
  isAlreadyProcessed,
  isRpcUnreachable,
  keypairFromSecret,
  lamportsToSol,
  signTransaction,
  signWith,
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

  it('can carry a reference: a read-only, unsigned key on the transfer, by which it is found on-chain', () => {
    const reference = Keypair.generate().publicKey;
    const tx = buildSolTransfer({ from: from.publicKey, to, lamports: 42n, reference }, recent);
    const [ix] = tx.message.compiledInstructions;
    const keys = ix!.accountKeyIndexes.map((i) => tx.message.staticAccountKeys[i]!);
    expect(keys.map((k) => k.toBase58())).toEqual([from.publicKey.toBase58(), to.toBase58(), reference.toBase58()]);
    const at = tx.message.staticAccountKeys.findIndex((k) => k.equals(reference));
    expect(tx.message.isAccountSigner(at)).toBe(false);
    expect(tx.message.isAccountWritable(at)).toBe(false);
    expect(tx.message.header.numRequiredSignatures).toBe(1);
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

  it('signs natively to the very signature web3.js makes, keeping a co-signer\'s signature already on it', () => {
    const cosigner = Keypair.generate();
    const instruction = SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: cosigner.publicKey, lamports: 1 });
    instruction.keys.push({ pubkey: cosigner.publicKey, isSigner: true, isWritable: false });
    const message = new TransactionMessage({ payerKey: from.publicKey, recentBlockhash: recent.blockhash, instructions: [instruction] }).compileToV0Message();
    const byWeb3 = new VersionedTransaction(message);
    byWeb3.sign([cosigner]);
    byWeb3.sign([from]);
    const native = new VersionedTransaction(message);
    signWith(native, [cosigner]);
    const signed = signTransaction(native, [keypairFromSecret(from.secretKey)], recent);
    expect(native.signatures.map((s) => Buffer.from(s).toString('hex'))).toEqual(byWeb3.signatures.map((s) => Buffer.from(s).toString('hex')));
    expect(Buffer.from(signed.wire)).toEqual(Buffer.from(byWeb3.serialize()));
    expect(() => signWith(new VersionedTransaction(message), [Keypair.generate()])).toThrow();
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

  it('leaves faults of unknown outcome alone: a bare expiry says nothing about whether the transaction landed', () => {
    expect(toChainError(new TransactionExpiredBlockheightExceededError('sig'))).toBeUndefined();
    expect(toChainError(new TypeError('fetch failed'))).toBeUndefined();
    expect(toChainError(new Error('socket hang up'))).toBeUndefined();
  });

  it('reads "already processed" as the bytes having landed, not as a refusal', () => {
    const again = refused('Transaction simulation failed: This transaction has already been processed', []);
    expect(isAlreadyProcessed(again)).toBe(true);
    expect(toChainError(again)).toBeUndefined();
    expect(isAlreadyProcessed(refused('Transaction simulation failed: Blockhash not found', []))).toBe(false);
  });

  it('tells an unreachable RPC, where nothing was sent, from other faults', () => {
    expect(isRpcUnreachable(new Error('failed to get recent blockhash: TypeError: fetch failed'))).toBe(true);
    expect(isRpcUnreachable(Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) }))).toBe(true);
    expect(isRpcUnreachable(new Error('503 Service Unavailable: upstream'))).toBe(true);
    expect(isRpcUnreachable(new Error('no custody secret for agent_1'))).toBe(false);
    expect(isRpcUnreachable('fetch failed')).toBe(false);
  });

  it('carries the signature of a transaction that landed and failed', () => {
    expect(new ChainError('tx_failed', 'failed', ['log'], 'sig').rejection).toEqual({ code: 'tx_failed', message: 'failed', details: { logs: ['log'], signature: 'sig' } });
  });
});

describe('confirming a sent transaction when its blockhash expires first', () => {
  const signed = { signature: 'SIG', wire: new Uint8Array(), ...recent };
  /** The two RPC answers confirmSignature reads after web3.js reports the expiry. */
  const rpc = (status: { err: unknown; confirmationStatus: string } | null) =>
    ({
      confirmTransaction: async () => {
        throw new TransactionExpiredBlockheightExceededError('SIG');
      },
      getSignatureStatus: async () => ({ context: { slot: 9 }, value: status && { slot: 9, confirmations: null, ...status } }),
      getTransaction: async () => ({ meta: { logMessages: ['log'] } }),
    }) as unknown as Connection;

  it('is a payment still in play when the cluster has processed it but not confirmed it', async () => {
    await expect(confirmSignature(rpc({ err: null, confirmationStatus: 'processed' }), signed)).rejects.toBeInstanceOf(OutcomeUnknownError);
  });

  it('is send_failed (nothing paid) only when the cluster never saw it', async () => {
    await expect(confirmSignature(rpc(null), signed)).rejects.toMatchObject({ code: 'send_failed', message: expect.stringMatching(/nothing was paid/) });
  });

  it('is confirmed, or tx_failed with its logs, when the last look says so', async () => {
    await expect(confirmSignature(rpc({ err: null, confirmationStatus: 'confirmed' }), signed)).resolves.toEqual({ signature: 'SIG', slot: 9 });
    await expect(confirmSignature(rpc({ err: { InstructionError: [0, 'Custom'] }, confirmationStatus: 'confirmed' }), signed)).rejects.toMatchObject({ code: 'tx_failed', logs: ['log'] });
  });
});

describe('explorer links', () => {
  it('names the cluster the RPC belongs to', () => {
    expect(explorerUrl('abc', 'https://api.mainnet-beta.solana.com')).toBe('https://explorer.solana.com/tx/abc');
    expect(explorerUrl('abc', 'https://api.devnet.solana.com')).toBe('https://explorer.solana.com/tx/abc?cluster=devnet');
    expect(explorerUrl('abc', 'http://127.0.0.1:8899')).toBe('https://explorer.solana.com/tx/abc?cluster=custom&customUrl=http%3A%2F%2F127.0.0.1%3A8899');
  });

  it('never copies a key, a path or credentials of the RPC URL, and names no remote custom cluster', () => {
    expect(explorerUrl('abc', 'http://127.0.0.1:8899/?api-key=tok123')).toBe('https://explorer.solana.com/tx/abc?cluster=custom&customUrl=http%3A%2F%2F127.0.0.1%3A8899');
    expect(explorerUrl('abc', 'http://user:tok123@localhost:8899/tok123')).toBe('https://explorer.solana.com/tx/abc?cluster=custom&customUrl=http%3A%2F%2Flocalhost%3A8899');
    expect(explorerUrl('abc', 'https://rpc.example.com/?api-key=tok123')).toBe('https://explorer.solana.com/tx/abc');
    expect(explorerUrl('abc', 'https://devnet.helius-rpc.com/?api-key=tok123')).toBe('https://explorer.solana.com/tx/abc?cluster=devnet');
  });

  it('shows an RPC URL as scheme, host and port only', () => {
    expect(rpcOrigin('https://user:tok123@rpc.example.com:8443/v2/tok123?api-key=tok123')).toBe('https://rpc.example.com:8443');
    expect(rpcOrigin('not a url tok123')).not.toContain('tok123');
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

describe('the SOL/USD price', () => {
  /** A price API that answers what the test says, counting the calls. */
  function priceSource() {
    const source = {
      calls: 0,
      answer: (): Promise<Response> => Promise.resolve(Response.json({ [WRAPPED_SOL_MINT]: { usdPrice: 150 } })),
      fetch: ((() => {
        source.calls += 1;
        return source.answer();
      }) as unknown) as typeof fetch,
    };
    return source;
  }

  it('is looked up at most once a minute', async () => {
    const source = priceSource();
    const chain = new SolanaChain({ rpcUrl: 'http://127.0.0.1:1', priceUrl: 'http://prices', fetch: source.fetch });
    expect(await chain.solUsd(0)).toBe(150);
    expect(await chain.solUsd(59_000)).toBe(150);
    expect(source.calls).toBe(1);
    expect(await chain.solUsd(61_000)).toBe(150);
    expect(source.calls).toBe(2);
  });

  it('answers the last known price at once while the source hangs, for up to five minutes', async () => {
    const source = priceSource();
    const chain = new SolanaChain({ rpcUrl: 'http://127.0.0.1:1', priceUrl: 'http://prices', fetch: source.fetch });
    expect(await chain.solUsd(0)).toBe(150);
    source.answer = () => new Promise<Response>(() => undefined);
    expect(await chain.solUsd(70_000)).toBe(150);
    expect(await chain.solUsd(71_000)).toBe(150);
    expect(source.calls).toBe(2);
  });

  it('is null while the source fails and nothing is known, and the next caller tries again', async () => {
    const source = priceSource();
    source.answer = () => Promise.reject(new TypeError('fetch failed'));
    const chain = new SolanaChain({ rpcUrl: 'http://127.0.0.1:1', priceUrl: 'http://prices', fetch: source.fetch });
    expect(await chain.solUsd(0)).toBeNull();
    source.answer = () => Promise.resolve(Response.json({ [WRAPPED_SOL_MINT]: { usdPrice: 151 } }));
    expect(await chain.solUsd(1_000)).toBe(151);
    expect(source.calls).toBe(2);
  });

  it('shares one lookup among concurrent callers', async () => {
    const source = priceSource();
    const chain = new SolanaChain({ rpcUrl: 'http://127.0.0.1:1', priceUrl: 'http://prices', fetch: source.fetch });
    expect(await Promise.all([chain.solUsd(0), chain.solUsd(0), chain.solUsd(1)])).toEqual([150, 150, 150]);
    expect(source.calls).toBe(1);
  });

  it('is null with no price API', async () => {
    expect(await new SolanaChain({ rpcUrl: 'http://127.0.0.1:1' }).solUsd()).toBeNull();
  });
});

describe('whether the RPC answers (the readiness probe)', () => {
  /** An RPC that answers what the test says, counting the calls and keeping what was asked. */
  function rpc() {
    const source = {
      calls: 0,
      asked: [] as unknown[],
      answer: (_signal: AbortSignal): Promise<Response> => Promise.resolve(Response.json({ jsonrpc: '2.0', id: 1, result: 42 })),
      fetch: (((_url: string, init: RequestInit) => {
        source.calls += 1;
        source.asked.push(JSON.parse(String(init.body)));
        return source.answer(init.signal!);
      }) as unknown) as typeof fetch,
    };
    return source;
  }

  it('asks getSlot at most once every 5 s, and callers meanwhile share the answer', async () => {
    const source = rpc();
    const chain = new SolanaChain({ rpcUrl: 'http://rpc', fetch: source.fetch });
    expect(await Promise.all([chain.reachable(0), chain.reachable(0), chain.reachable(4_999)])).toEqual([true, true, true]);
    expect(source.calls).toBe(1);
    expect(source.asked[0]).toMatchObject({ jsonrpc: '2.0', method: 'getSlot' });
    expect(await chain.reachable(5_000)).toBe(true);
    expect(source.calls).toBe(2);
  });

  it('is false while the RPC refuses, fails or answers no slot, and asks again 5 s later', async () => {
    const source = rpc();
    const chain = new SolanaChain({ rpcUrl: 'http://rpc', fetch: source.fetch });
    source.answer = () => Promise.reject(new TypeError('fetch failed'));
    expect(await chain.reachable(0)).toBe(false);
    source.answer = () => Promise.resolve(new Response('busy', { status: 503 }));
    expect(await chain.reachable(5_000)).toBe(false);
    source.answer = () => Promise.resolve(Response.json({ jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'Node is behind' } }));
    expect(await chain.reachable(10_000)).toBe(false);
    source.answer = () => Promise.resolve(Response.json({ jsonrpc: '2.0', id: 1, result: 43 }));
    expect(await chain.reachable(12_000)).toBe(false);
    expect(await chain.reachable(15_000)).toBe(true);
    expect(source.calls).toBe(4);
  });

  it('gives up on an RPC that does not answer after a second', async () => {
    const source = rpc();
    source.answer = (signal) => new Promise<Response>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    const chain = new SolanaChain({ rpcUrl: 'http://rpc', fetch: source.fetch });
    const started = Date.now();
    expect(await chain.reachable()).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
