/**
 * Re-verifies the whole ledger hash chain from the public API alone (no database access):
 *
 *   npm run audit -- --url <base url> [--rpc <solana rpc url>] [--json]
 *
 * Pages through /api/v1/changes from the start, checks that seq is gapless from 0, that every `prev`
 * is the hash before it and that every hash recomputes, then checks that /api/v1/attest names the
 * same head and length. With --rpc it then checks every anchor of the ledger head on Solana against
 * the chain it recomputed (scripts/audit/anchors.ts). Exit codes: 0 verified, 1 the chain, the
 * attestation or an anchor does not verify, 2 usage or network error (nothing could be concluded).
 */
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { GENESIS_HASH, checkServedEntry, type LedgerEntry } from '@svc/ledger';
import { checkAnchors } from './audit/anchors';
import type { AnchorJudgement } from './audit/anchorCheck';
import { AuditError, getJson } from './audit/http';
import { LedgerFacts } from './audit/ledgerFacts';
import { AuditRpc } from './audit/rpc';

const PAGE_SIZE = 1000;
/** Rounds of catching up with entries appended while the audit ran, before calling the lengths different. */
const CATCH_UP_ROUNDS = 5;

const USAGE = 'usage: npm run audit -- --url <base url> [--rpc <solana rpc url>] [--json]';

interface Attestation {
  head: string;
  length: number;
  verified: { ok: boolean; checked: number; first_bad_seq?: number; reason?: string };
}

interface ChangesPage {
  changes: LedgerEntry[];
  has_more: boolean;
}

/** What the walk has established so far: `count` entries verified, ending in `head`; with --rpc, what anchors need. */
interface ChainState {
  count: number;
  head: string;
  facts?: LedgerFacts;
}

type Verdict =
  | { ok: true; entries: number; head: string; anchors?: number; latest_anchor_seq?: number | null }
  | { ok: false; first_bad_seq: number | null; reason: string; entries_verified: number }
  | { ok: false; first_bad_anchor: Pick<AnchorJudgement, 'seq' | 'signature'> & { reason: string }; entries_verified: number; head: string };

class ChainBroken extends Error {
  constructor(
    readonly seq: number,
    reason: string,
  ) {
    super(reason);
  }
}

function httpUrl(flag: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AuditError(`${flag} is not a URL: ${value}\n${USAGE}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AuditError(`${flag} must be http(s): ${value}`);
  return url.toString().replace(/\/+$/, '');
}

function parseOptions(argv: string[]): { url: string; rpc?: string; json: boolean } {
  let values: { url?: string; rpc?: string; json?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: { url: { type: 'string' }, rpc: { type: 'string' }, json: { type: 'boolean', default: false } }, strict: true }));
  } catch (error) {
    throw new AuditError(`${(error as Error).message}\n${USAGE}`);
  }
  if (!values.url) throw new AuditError(`--url is required\n${USAGE}`);
  return { url: httpUrl('--url', values.url), rpc: values.rpc === undefined ? undefined : httpUrl('--rpc', values.rpc), json: values.json ?? false };
}

async function fetchAttestation(base: string): Promise<Attestation> {
  const body = await getJson(base, '/api/v1/attest');
  const verified = body.verified as Attestation['verified'] | undefined;
  if (body.ok !== true || typeof body.head !== 'string' || !Number.isInteger(body.length) || typeof verified?.ok !== 'boolean') {
    throw new AuditError('/api/v1/attest answered an unexpected shape');
  }
  return body as unknown as Attestation;
}

async function fetchPage(base: string, after: number): Promise<ChangesPage> {
  const body = await getJson(base, `/api/v1/changes?after=${after}&limit=${PAGE_SIZE}`);
  if (body.ok !== true || !Array.isArray(body.changes) || typeof body.has_more !== 'boolean') {
    throw new AuditError(`/api/v1/changes?after=${after} answered an unexpected shape`);
  }
  return body as unknown as ChangesPage;
}

/** Checks one served entry against the chain so far; throws ChainBroken naming the seq it should have had. */
function verifyEntry(state: ChainState, entry: LedgerEntry): void {
  const expected = state.count;
  if (entry === null || typeof entry !== 'object' || !Number.isInteger(entry.seq)) {
    throw new ChainBroken(expected, 'served entry has no integer seq');
  }
  if (entry.seq !== expected) {
    throw new ChainBroken(expected, entry.seq > expected ? `missing: the next entry served is seq ${entry.seq}` : `seq ${entry.seq} served again or out of order`);
  }
  let problem: string | null;
  try {
    problem = checkServedEntry(entry, state.head);
  } catch (error) {
    // canonicalize throws on values JSON cannot carry, e.g. a missing field.
    problem = `entry has no canonical form (${(error as Error).message})`;
  }
  if (problem) throw new ChainBroken(entry.seq, problem);
  state.facts?.add(entry);
  state.count += 1;
  state.head = entry.hash;
}

/** Verifies pages from where `state` ends until the service says there is no more. */
async function walkChanges(base: string, state: ChainState, onProgress: (count: number) => void): Promise<void> {
  for (;;) {
    const page = await fetchPage(base, state.count - 1);
    for (const entry of page.changes) verifyEntry(state, entry);
    onProgress(state.count);
    if (!page.has_more) return;
    // Without this a service that keeps saying has_more while sending nothing would loop us forever.
    if (page.changes.length === 0) throw new AuditError(`/api/v1/changes?after=${state.count - 1} says has_more but sent no entries`);
  }
}

/**
 * Compares the walked chain with the service's own attestation. A live service may have appended
 * since the walk, so the walk catches up (the chain is append-only, so the verified prefix stays valid).
 */
async function reconcile(base: string, state: ChainState, onProgress: (count: number) => void): Promise<Verdict> {
  let attestation = await fetchAttestation(base);
  for (let round = 0; attestation.length > state.count && round < CATCH_UP_ROUNDS; round += 1) {
    await walkChanges(base, state, onProgress);
    attestation = await fetchAttestation(base);
  }
  const fail = (first_bad_seq: number | null, reason: string): Verdict => ({ ok: false, first_bad_seq, reason, entries_verified: state.count });
  if (attestation.length !== state.count) {
    return fail(null, `length mismatch: /attest reports ${attestation.length} entries, /changes served ${state.count}`);
  }
  if (attestation.head !== state.head) {
    return fail(null, `head mismatch: /attest reports ${attestation.head}, the served chain ends in ${state.head}`);
  }
  // The served copy can be intact while the stored chain behind it is not; the service's own check says so.
  if (!attestation.verified.ok) {
    const seq = attestation.verified.first_bad_seq ?? null;
    return fail(seq, `/attest reports the stored chain does not verify (${attestation.verified.reason ?? 'no reason given'}), though the served copy does`);
  }
  return { ok: true, entries: state.count, head: state.head };
}

function startProgress(total: number): { update(count: number): void; stop(): void } {
  // stderr, so stdout carries only the result; cli-progress draws nothing when stderr is not a terminal.
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: 'auditing [{bar}] {percentage}% | {value}/{total} entries', hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return {
    update(count) {
      if (count > bar.getTotal()) bar.setTotal(count);
      bar.update(count);
    },
    stop: () => bar.stop(),
  };
}

/** Checks the anchors against the chain the walk verified; the walk may go on for anchors newer than it. */
async function auditAnchors(base: string, rpc: AuditRpc, state: ChainState & { facts: LedgerFacts }, onProgress: (count: number) => void): Promise<Verdict> {
  const outcome = await checkAnchors(base, rpc, state.facts, () => walkChanges(base, state, onProgress));
  if (outcome.ok) return { ok: true, entries: state.count, head: state.head, anchors: outcome.anchors, latest_anchor_seq: outcome.latestSeq };
  if ('reason' in outcome) return { ok: false, first_bad_seq: null, reason: outcome.reason, entries_verified: state.count };
  const { seq, signature, problem } = outcome.first;
  return { ok: false, first_bad_anchor: { seq, signature, reason: problem ?? '' }, entries_verified: state.count, head: state.head };
}

async function audit(base: string, rpcUrl: string | undefined): Promise<Verdict> {
  const initial = await fetchAttestation(base);
  const progress = startProgress(initial.length);
  const facts = rpcUrl ? new LedgerFacts(initial.length) : undefined;
  const state: ChainState = { count: 0, head: GENESIS_HASH, facts };
  try {
    await walkChanges(base, state, progress.update);
    const verdict = await reconcile(base, state, progress.update);
    if (!verdict.ok || !rpcUrl || !facts) return verdict;
    return await auditAnchors(base, new AuditRpc(rpcUrl), { ...state, facts }, progress.update);
  } catch (error) {
    if (error instanceof ChainBroken) return { ok: false, first_bad_seq: error.seq, reason: error.message, entries_verified: state.count };
    throw error;
  } finally {
    progress.stop();
  }
}

function report(verdict: Verdict, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(verdict)}\n`);
  } else if (verdict.ok) {
    const anchors =
      verdict.anchors === undefined
        ? ''
        : `; ${verdict.anchors} anchors verified against the chain${verdict.latest_anchor_seq === null ? '' : `, latest at seq ${verdict.latest_anchor_seq}`}`;
    process.stdout.write(`OK: ${verdict.entries} entries verified, head ${verdict.head}${anchors}\n`);
  } else if ('first_bad_anchor' in verdict) {
    const { seq, signature, reason } = verdict.first_bad_anchor;
    process.stdout.write(`FAILED: anchor at seq ${seq ?? 'unknown'} (${signature}) disagrees: ${reason}\n`);
  } else if (verdict.first_bad_seq !== null) {
    process.stdout.write(`FAILED: first bad seq ${verdict.first_bad_seq}: ${verdict.reason}\n`);
  } else {
    process.stdout.write(`FAILED: ${verdict.reason}\n`);
  }
}

async function main(): Promise<number> {
  let json = process.argv.includes('--json');
  try {
    const options = parseOptions(process.argv.slice(2));
    json = options.json;
    const verdict = await audit(options.url, options.rpc);
    report(verdict, json);
    return verdict.ok ? 0 : 1;
  } catch (error) {
    const message = error instanceof AuditError ? error.message : `unexpected error: ${(error as Error)?.stack ?? String(error)}`;
    if (json) process.stdout.write(`${JSON.stringify({ ok: false, error: message })}\n`);
    process.stderr.write(`audit: ${message}\n`);
    return 2;
  }
}

main().then((code) => {
  process.exitCode = code;
});
