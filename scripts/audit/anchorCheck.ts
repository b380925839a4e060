import { ed25519 } from '@noble/curves/ed25519';
import type { VersionedTransactionResponse } from '@solana/web3.js';
import bs58 from 'bs58';
import type { RecordedAnchor } from './ledgerFacts';

export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
export const MEMO_PREFIX = 'svc-ledger:v1:';
const MEMO_PATTERN = /^svc-ledger:v1:(0|[1-9][0-9]{0,15}):([0-9a-f]{64})$/;

export interface AnchorMemo {
  seq: number;
  hash: string;
}

/** `svc-ledger:v1:<seq>:<hash>`, or null when the text is not exactly that. */
export function parseMemo(text: string): AnchorMemo | null {
  const match = MEMO_PATTERN.exec(text);
  if (!match) return null;
  const seq = Number(match[1]);
  return Number.isSafeInteger(seq) ? { seq, hash: match[2]! } : null;
}

/** What the audit reads of one transaction, whatever RPC encoding carried it. */
export interface ChainTx {
  err: unknown;
  feePayer: string;
  signers: string[];
  /** The first signature is the one asked for and verifies over the message with the fee payer's key. */
  signatureValid: boolean;
  /** Texts of the top-level memo instructions that start with the ledger prefix. */
  ledgerMemos: string[];
}

export function readTransaction(signature: string, response: VersionedTransactionResponse): ChainTx {
  const message = response.transaction.message;
  const keys = message.staticAccountKeys.map((key) => key.toBase58());
  const signers = keys.slice(0, message.header.numRequiredSignatures);
  const first = response.transaction.signatures[0];
  let signatureValid = false;
  if (first === signature && keys[0] !== undefined) {
    try {
      // An RPC cannot forge this: it proves the fee payer signed exactly these instructions.
      signatureValid = ed25519.verify(bs58.decode(first), message.serialize(), bs58.decode(keys[0]));
    } catch {
      signatureValid = false;
    }
  }
  const ledgerMemos = message.compiledInstructions
    .filter((ix) => keys[ix.programIdIndex] === MEMO_PROGRAM)
    .map((ix) => Buffer.from(ix.data).toString('utf8'))
    .filter((text) => text.startsWith(MEMO_PREFIX));
  return { err: response.meta ? response.meta.err : 'no status', feePayer: keys[0] ?? '', signers, signatureValid, ledgerMemos };
}

/** An anchor found anywhere: listed by the service, recorded on the ledger, or sent by the treasury on the chain. */
export interface AnchorCandidate {
  signature: string;
  listed?: { seq: unknown; hash: unknown };
  recorded?: RecordedAnchor;
}

/** The walked chain, as far as the anchor check reads it. */
export interface WalkedChain {
  length: number;
  hashAt(seq: number): string | undefined;
}

export interface AnchorJudgement {
  signature: string;
  /** The anchored seq: the memo's, else the one the service or the ledger gave; null if none did. */
  seq: number | null;
  /** Why it disagrees; null when it holds. */
  problem: string | null;
}

function claims(what: string, claimed: { seq: unknown; hash: unknown }, memo: AnchorMemo): string | null {
  if (claimed.seq === memo.seq && claimed.hash === memo.hash) return null;
  return `${what} seq ${String(claimed.seq)} hash ${String(claimed.hash)}, but its memo says seq ${memo.seq} hash ${memo.hash}`;
}

/** Checks one anchor's transaction against the treasury and the chain the audit recomputed. */
export function judgeAnchor(candidate: AnchorCandidate, tx: ChainTx | null, treasury: string, chain: WalkedChain): AnchorJudgement {
  const claimedSeq = [candidate.listed?.seq, candidate.recorded?.seq].find((seq): seq is number => Number.isSafeInteger(seq));
  const verdict = (problem: string | null, seq: number | null = claimedSeq ?? null): AnchorJudgement => ({ signature: candidate.signature, seq, problem });
  if (!tx) return verdict('its transaction is not on the chain');
  if (tx.err !== null) return verdict(`its transaction failed on the chain (${JSON.stringify(tx.err)})`);
  if (tx.feePayer !== treasury) return verdict(`it is paid for by ${tx.feePayer}, not by the treasury ${treasury}`);
  if (tx.signers.length !== 1) return verdict(`it has ${tx.signers.length} signers; an anchor is signed by the treasury alone`);
  if (!tx.signatureValid) return verdict("the treasury's signature on it does not verify");
  if (tx.ledgerMemos.length !== 1) return verdict(tx.ledgerMemos.length === 0 ? 'it carries no svc-ledger memo' : `it carries ${tx.ledgerMemos.length} svc-ledger memos`);
  const memo = parseMemo(tx.ledgerMemos[0]!);
  if (!memo) return verdict(`its memo does not parse: ${JSON.stringify(tx.ledgerMemos[0]!.slice(0, 160))}`);
  const mismatch =
    (candidate.listed && claims('the service lists', candidate.listed, memo)) ??
    (candidate.recorded && claims(`the ledger records (at seq ${candidate.recorded.ledgerSeq})`, candidate.recorded, memo));
  if (mismatch) return verdict(mismatch, memo.seq);
  const recomputed = chain.hashAt(memo.seq);
  if (recomputed === undefined) return verdict(`the chain is shorter than an anchor: the memo names seq ${memo.seq}, the served chain ends at seq ${chain.length - 1}`, memo.seq);
  if (recomputed !== memo.hash) return verdict(`the memo commits to hash ${memo.hash}, but the served chain recomputes ${recomputed} at seq ${memo.seq}`, memo.seq);
  return verdict(null, memo.seq);
}

/** The disagreeing anchor with the lowest seq (those whose seq nobody can tell come last). */
export function firstBad(judgements: AnchorJudgement[]): AnchorJudgement | undefined {
  const rank = (j: AnchorJudgement) => j.seq ?? Number.POSITIVE_INFINITY;
  return judgements.filter((j) => j.problem !== null).sort((a, b) => rank(a) - rank(b) || a.signature.localeCompare(b.signature))[0];
}
