/**
 * The audit against the chain (`--rpc`): every anchor the service lists, the ledger records or the treasury sent
 * is fetched from the RPC and checked against the chain the audit recomputed. The treasury's own history on the
 * chain is read back to its first transaction, so an anchor the service stopped listing is still checked.
 */
import bs58 from 'bs58';
import { MEMO_PREFIX, firstBad, judgeAnchor, parseMemo, readTransaction, type AnchorCandidate, type AnchorJudgement, type ChainTx } from './anchorCheck';
import { AuditError, getJson } from './http';
import type { LedgerFacts } from './ledgerFacts';
import { TRANSACTION_BATCH, type AuditRpc } from './rpc';

const ANCHOR_PAGE = 100;

export type AnchorOutcome =
  | { ok: true; anchors: number; latestSeq: number | null }
  | { ok: false; first: AnchorJudgement }
  | { ok: false; reason: string };

interface ServedAnchor {
  seq: unknown;
  hash: unknown;
  signature: string;
}

/** Every anchor /api/v1/anchors lists, all pages. */
export async function listServedAnchors(base: string): Promise<ServedAnchor[]> {
  const all: ServedAnchor[] = [];
  let before: number | null = null;
  for (;;) {
    const path: string = `/api/v1/anchors?limit=${ANCHOR_PAGE}${before === null ? '' : `&before=${before}`}`;
    const body = await getJson(base, path);
    const next = body.next_before;
    if (body.ok !== true || !Array.isArray(body.anchors) || (next !== null && !Number.isSafeInteger(next))) {
      throw new AuditError(`${path} answered an unexpected shape`);
    }
    for (const anchor of body.anchors as Record<string, unknown>[]) {
      if (anchor === null || typeof anchor !== 'object' || typeof anchor.signature !== 'string') throw new AuditError(`${path} lists an anchor without a signature`);
      all.push({ seq: anchor.seq, hash: anchor.hash, signature: anchor.signature });
    }
    if (next === null) return all;
    // Paging must move towards seq 0, or a service could keep the audit here forever.
    if (before !== null && (next as number) >= before) throw new AuditError(`${path} answered next_before ${String(next)}, not below ${before}`);
    before = next as number;
  }
}

function isSignature(text: string): boolean {
  try {
    return bs58.decode(text).length === 64;
  } catch {
    return false;
  }
}

/** Fetches transactions a batch at a time; `keep` decides, per transaction, whether its reading is kept. */
async function readTransactions(rpc: AuditRpc, signatures: string[], keep: (signature: string, tx: ChainTx | null) => void): Promise<void> {
  for (let i = 0; i < signatures.length; i += TRANSACTION_BATCH) {
    const batch = signatures.slice(i, i + TRANSACTION_BATCH);
    const replies = await rpc.transactions(batch);
    if (replies.length !== batch.length) throw new AuditError(`the RPC answered ${replies.length} transactions for ${batch.length} signatures`);
    batch.forEach((signature, j) => {
      const reply = replies[j];
      keep(signature, reply ? readTransaction(signature, reply) : null);
    });
  }
}

function highestSeq(candidates: Iterable<AnchorCandidate>, txs: Map<string, ChainTx | null>): number {
  let highest = -1;
  for (const candidate of candidates) {
    const memo = txs.get(candidate.signature)?.ledgerMemos.map(parseMemo).find((m) => m !== null);
    for (const seq of [memo?.seq, candidate.listed?.seq]) if (Number.isSafeInteger(seq)) highest = Math.max(highest, seq as number);
  }
  return highest;
}

/**
 * Checks every anchor and names the one with the lowest seq that disagrees. `catchUp` walks the served chain
 * further: an anchor sent after the walk may name a seq appended meanwhile.
 */
export async function checkAnchors(base: string, rpc: AuditRpc, facts: LedgerFacts, catchUp: () => Promise<void>): Promise<AnchorOutcome> {
  const treasury = facts.treasury?.wallet;
  if (!treasury) return { ok: false, reason: 'the ledger registers no @treasury, whose transactions the anchors are' };
  const candidates = new Map<string, AnchorCandidate>();
  const candidate = (signature: string) => candidates.get(signature) ?? candidates.set(signature, { signature }).get(signature)!;
  for (const served of await listServedAnchors(base)) candidate(served.signature).listed ??= { seq: served.seq, hash: served.hash };

  const txs = new Map<string, ChainTx | null>();
  // Failed transactions are no anchors; one the service lists is still fetched below and judged failed. A real RPC
  // names each transaction's memos, so one whose memos hold no ledger prefix is not fetched (the bundled chain
  // names none: all are).
  const history = (await rpc.signaturesOf(treasury))
    .filter((info) => info.err === null && (typeof info.memo !== 'string' || info.memo.includes(MEMO_PREFIX)))
    .map((info) => info.signature);
  await readTransactions(rpc, history, (signature, tx) => {
    if (tx && tx.feePayer === treasury && tx.ledgerMemos.length > 0) {
      candidate(signature);
      txs.set(signature, tx);
    }
  });
  if (highestSeq(candidates.values(), txs) >= facts.length) await catchUp();
  for (const recorded of facts.recorded) candidate(recorded.signature).recorded ??= recorded;

  const judgements: AnchorJudgement[] = [];
  const unread = [...candidates.keys()].filter((signature) => !txs.has(signature));
  for (const signature of unread.filter((s) => !isSignature(s))) {
    judgements.push({ ...judgeAnchor(candidates.get(signature)!, null, treasury, facts), problem: 'its signature is not a transaction signature' });
  }
  await readTransactions(rpc, unread.filter(isSignature), (signature, tx) => txs.set(signature, tx));
  for (const [signature, tx] of txs) {
    const found = candidates.get(signature);
    if (found) judgements.push(judgeAnchor(found, tx, treasury, facts));
  }
  const bad = firstBad(judgements);
  if (bad) return { ok: false, first: bad };
  const latestSeq = judgements.reduce<number | null>((latest, j) => (j.seq !== null && (latest === null || j.seq > latest) ? j.seq : latest), null);
  return { ok: true, anchors: judgements.length, latestSeq };
}
