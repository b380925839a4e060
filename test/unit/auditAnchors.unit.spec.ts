import { createHash } from 'node:crypto';
import { Keypair, PublicKey, TransactionInstruction, TransactionMessage, VersionedTransaction, type VersionedTransactionResponse } from '@solana/web3.js';
import bs58 from 'bs58';
import { GENESIS_HASH, sealEntry, type LedgerEntry } from '@svc/ledger';
import { MEMO_PROGRAM, firstBad, judgeAnchor, parseMemo, readTransaction, type AnchorCandidate, type ChainTx } from '../../scripts/audit/anchorCheck';
import { LedgerFacts } from '../../scripts/audit/ledgerFacts';

// How `npm run audit -- --rpc` judges one anchor's transaction, on transactions built and signed here.

const treasury = Keypair.generate();
const stranger = Keypair.generate();
const BLOCKHASH = bs58.encode(createHash('sha256').update('blockhash').digest());

function memo(text: string): TransactionInstruction {
  return new TransactionInstruction({ programId: new PublicKey(MEMO_PROGRAM), keys: [], data: Buffer.from(text, 'utf8') });
}

/** A confirmed transaction as web3.js's getTransaction gives it. */
function confirmed(instructions: TransactionInstruction[], signers = [treasury], err: unknown = null): { signature: string; response: VersionedTransactionResponse } {
  const message = new TransactionMessage({ payerKey: signers[0]!.publicKey, recentBlockhash: BLOCKHASH, instructions }).compileToV0Message();
  const tx = new VersionedTransaction(message);
  tx.sign(signers);
  const signatures = tx.signatures.map((s) => bs58.encode(s));
  const response = { slot: 1, blockTime: null, transaction: { message, signatures }, meta: { err } } as unknown as VersionedTransactionResponse;
  return { signature: signatures[0]!, response };
}

/** A walked chain of `length` entries. */
function chainOf(length: number): LedgerFacts {
  const facts = new LedgerFacts();
  let prev = GENESIS_HASH;
  for (let seq = 0; seq < length; seq += 1) {
    const entry: LedgerEntry = sealEntry(prev, { seq, type: 'PostCreated', at: seq, actor: 'a', data: { body: `post ${seq}` } });
    facts.add(entry);
    prev = entry.hash;
  }
  return facts;
}

const chain = chainOf(20);
const anchorMemo = (seq: number, hash = chain.hashAt(seq)!) => `svc-ledger:v1:${seq}:${hash}`;

function judge(tx: { signature: string; response: VersionedTransactionResponse } | null, extra: Partial<AnchorCandidate> = {}, signature = tx?.signature ?? 'x') {
  const read: ChainTx | null = tx ? readTransaction(signature, tx.response) : null;
  return judgeAnchor({ signature, ...extra }, read, treasury.publicKey.toBase58(), chain);
}

describe('the memo', () => {
  it('parses only svc-ledger:v1:<seq>:<64 lowercase hex>', () => {
    const hash = 'ab'.repeat(32);
    expect(parseMemo(`svc-ledger:v1:12:${hash}`)).toEqual({ seq: 12, hash });
    expect(parseMemo(`svc-ledger:v1:0:${hash}`)).toEqual({ seq: 0, hash });
    for (const bad of [`svc-ledger:v1:012:${hash}`, `svc-ledger:v1:1:${hash.toUpperCase()}`, `svc-ledger:v1:1:${hash}x`, `svc-ledger:v2:1:${hash}`, `svc-ledger:v1:-1:${hash}`, 'svc-ledger:v1:1:ab']) {
      expect(parseMemo(bad)).toBeNull();
    }
  });
});

describe('judging an anchor', () => {
  it('holds when the treasury alone signed a memo of the hash the chain recomputes', () => {
    const tx = confirmed([memo(anchorMemo(7))]);
    expect(judge(tx, { listed: { seq: 7, hash: chain.hashAt(7) } })).toEqual({ signature: tx.signature, seq: 7, problem: null });
  });

  it('disagrees when the recomputed chain has another hash at the anchored seq', () => {
    const other = 'cd'.repeat(32);
    expect(judge(confirmed([memo(anchorMemo(7, other))])).problem).toBe(`the memo commits to hash ${other}, but the served chain recomputes ${chain.hashAt(7)} at seq 7`);
  });

  it('disagrees when the anchored seq is beyond the walked chain', () => {
    expect(judge(confirmed([memo(anchorMemo(25, 'ef'.repeat(32)))]))).toMatchObject({ seq: 25, problem: 'the chain is shorter than an anchor: the memo names seq 25, the served chain ends at seq 19' });
  });

  it('disagrees when the service or the ledger names another seq or hash than the memo', () => {
    const tx = confirmed([memo(anchorMemo(7))]);
    expect(judge(tx, { listed: { seq: 8, hash: chain.hashAt(7) } }).problem).toMatch(/^the service lists seq 8 hash .*, but its memo says seq 7 hash/);
    const recorded = { signature: tx.signature, seq: 7, hash: chain.hashAt(6), memo: '', ledgerSeq: 9 };
    expect(judge(tx, { recorded }).problem).toMatch(/^the ledger records \(at seq 9\) seq 7 hash .*, but its memo says seq 7 hash/);
  });

  it('disagrees when someone else pays, or signs beside the treasury', () => {
    expect(judge(confirmed([memo(anchorMemo(3))], [stranger])).problem).toBe(`it is paid for by ${stranger.publicKey.toBase58()}, not by the treasury ${treasury.publicKey.toBase58()}`);
    const cosigned = new TransactionInstruction({ programId: new PublicKey(MEMO_PROGRAM), keys: [{ pubkey: stranger.publicKey, isSigner: true, isWritable: false }], data: Buffer.from(anchorMemo(3)) });
    expect(judge(confirmed([cosigned], [treasury, stranger])).problem).toBe('it has 2 signers; an anchor is signed by the treasury alone');
  });

  it("disagrees when the treasury's signature does not cover what the RPC served", () => {
    const signed = confirmed([memo(anchorMemo(3))]);
    const forged = confirmed([memo(anchorMemo(4))]);
    // The memo of another transaction under this one's signature: what a lying RPC would have to serve.
    const served = { ...forged.response, transaction: { ...forged.response.transaction, signatures: [signed.signature] } };
    expect(judge({ signature: signed.signature, response: served }).problem).toBe("the treasury's signature on it does not verify");
  });

  it('disagrees when the transaction is missing, failed, or carries no single parsable memo', () => {
    expect(judge(null, { listed: { seq: 5, hash: 'x' } })).toMatchObject({ seq: 5, problem: 'its transaction is not on the chain' });
    expect(judge(confirmed([memo(anchorMemo(3))], [treasury], { InstructionError: [0, 'Custom'] })).problem).toBe('its transaction failed on the chain ({"InstructionError":[0,"Custom"]})');
    expect(judge(confirmed([memo('gm')])).problem).toBe('it carries no svc-ledger memo');
    expect(judge(confirmed([memo(anchorMemo(3)), memo(anchorMemo(4))])).problem).toBe('it carries 2 svc-ledger memos');
    expect(judge(confirmed([memo('svc-ledger:v1:3:zz')])).problem).toBe('its memo does not parse: "svc-ledger:v1:3:zz"');
  });

  it('names the disagreeing anchor with the lowest seq, and those of unknown seq last', () => {
    const judgements = [
      { signature: 'a', seq: 9, problem: 'x' },
      { signature: 'b', seq: null, problem: 'y' },
      { signature: 'c', seq: 3, problem: null },
      { signature: 'd', seq: 5, problem: 'z' },
    ];
    expect(firstBad(judgements)).toEqual({ signature: 'd', seq: 5, problem: 'z' });
    expect(firstBad([judgements[1]!, judgements[2]!])?.signature).toBe('b');
    expect(firstBad([judgements[2]!])).toBeUndefined();
  });
});

describe('the facts the walk keeps', () => {
  it('keeps every hash by seq past its first growth, and the treasury and anchors the ledger records', () => {
    const facts = new LedgerFacts();
    const hashes: string[] = [];
    let prev = GENESIS_HASH;
    for (let seq = 0; seq < 3000; seq += 1) {
      const data =
        seq === 0
          ? { agent_id: 'agent_t', handle: 'treasury', wallet: 'W' }
          : seq === 2999
            ? { action: 'anchor', signature: 'S', wallet: 'W', details: { seq: 2990, hash: hashes[2990], memo: 'm' } }
            : { n: seq };
      const entry = sealEntry(prev, { seq, type: seq === 0 ? 'CitizenRegistered' : seq === 2999 ? 'ActionRecorded' : 'Other', at: 0, actor: 'agent_t', data });
      facts.add(entry);
      hashes.push(entry.hash);
      prev = entry.hash;
    }
    expect(facts.length).toBe(3000);
    expect([0, 1023, 1024, 2999].map((seq) => facts.hashAt(seq))).toEqual([hashes[0], hashes[1023], hashes[1024], hashes[2999]]);
    expect(facts.hashAt(3000)).toBeUndefined();
    expect(facts.treasury).toEqual({ wallet: 'W', agentId: 'agent_t' });
    expect(facts.recorded).toEqual([{ signature: 'S', seq: 2990, hash: hashes[2990], memo: 'm', ledgerSeq: 2999 }]);
  });
});
