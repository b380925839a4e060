import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import type { PipelineDeps } from '@svc/actions';
import type { RunningServer } from '../embedded';
import { median, percentile } from './stats';

/** Where a transfer's time goes, stage by stage: the pipeline's calls timed inside the running service. */

export interface Span {
  stage: string;
  start: number;
  end: number;
}

/** One transfer's timeline: from its entry into the pipeline (or the baseline's first step) to its end. */
export interface Trace {
  start: number;
  end: number;
  spans: Span[];
}

export const traces = new AsyncLocalStorage<Trace>();

/**
 * Replaces each named async method of `target` with one that records how long it took into the trace of
 * the transfer that called it; a call outside a traced transfer passes straight through.
 */
export function timeCalls(target: object, stages: Record<string, string | ((...args: unknown[]) => string)>): void {
  const methods = target as Record<string, (...args: unknown[]) => unknown>;
  for (const [method, stageOf] of Object.entries(stages)) {
    const original = methods[method];
    if (typeof original !== 'function') throw new Error(`cannot time ${method}: not a method`);
    methods[method] = function (this: unknown, ...args: unknown[]) {
      const trace = traces.getStore();
      if (!trace) return original.apply(this, args);
      const stage = typeof stageOf === 'string' ? stageOf : stageOf(...args);
      const start = performance.now();
      return Promise.resolve(original.apply(this, args)).finally(() => trace.spans.push({ stage, start, end: performance.now() }));
    };
  }
}

export const STAGE = {
  httpIn: 'HTTP in: parse, auth, validate, plan (a trade reads the market and quotes)',
  observe: 'chain: getTransaction (the fill the record states)',
  reserve: 'outbox: reserve the row (INSERT)',
  insertSigned: 'outbox: store the signed row (INSERT)',
  holdSpend: 'ledger: spending policy at the head (ReserveSpend)',
  blockhash: 'chain: getLatestBlockhash',
  build: 'build + compile the v0 message',
  fee: 'chain: getFeeForMessage',
  funds: 'chain: funds check (getBalance + getMinimumBalanceForRentExemption)',
  custody: 'vault: unseal the custody key',
  sign: 'sign: keypair from secret, ed25519, message hash',
  markSigned: 'outbox: store the signed bytes (UPDATE)',
  reread: 'outbox: read the row back (SELECT)',
  send: 'chain: sendTransaction (with preflight)',
  confirm: 'chain: confirmTransaction (signatureSubscribe)',
  sync: 'ledger: writer.sync (head read, queued behind appends)',
  append: 'ledger: record it (group-commit append, outbox row done in it)',
  markDone: 'outbox: mark done (UPDATE)',
  outboxOther: 'outbox: other',
  other: 'other JS between stages',
  after: 'after the last timed call: the outcome',
  httpOut: 'HTTP out: reply, serialise, client reads',
  baselineSign: 'build + sign (web3.js, cached blockhash)',
} as const;

/** Untimed work between two timed calls, named after the call it leads to. */
const GAP_BEFORE: Record<string, string> = { [STAGE.fee]: STAGE.build, [STAGE.markSigned]: STAGE.sign };

/** Wraps the running service's parts the pipeline goes through, and its entry point, so each transfer leaves a trace. */
export function instrumentPipeline(server: RunningServer, finished: Map<string, Trace>): void {
  const { pipeline, writer } = server.services;
  const deps = (pipeline as unknown as { deps: PipelineDeps }).deps;
  timeCalls(deps.outbox, {
    reserve: STAGE.reserve,
    insertSigned: STAGE.insertSigned,
    markSigned: STAGE.markSigned,
    get: STAGE.reread,
    markDone: STAGE.markDone,
    release: STAGE.outboxOther,
    renewLease: STAGE.outboxOther,
  });
  timeCalls(deps, { walletSecret: STAGE.custody });
  timeCalls(writer, { sync: STAGE.sync, executeAtHead: (command) => ((command as { type?: string }).type === 'ReserveSpend' ? STAGE.holdSpend : STAGE.append) });
  timeCalls(server.services.chain.connection, chainStages());
  const run = pipeline.run.bind(pipeline);
  pipeline.run = (intent) => {
    const trace: Trace = { start: performance.now(), end: 0, spans: [] };
    return traces.run(trace, async () => {
      const outcome = await run(intent);
      trace.end = performance.now();
      if (outcome.executed) finished.set(outcome.signature, trace);
      return outcome;
    });
  };
}

export function chainStages(): Record<string, string> {
  return {
    getLatestBlockhash: STAGE.blockhash,
    getFeeForMessage: STAGE.fee,
    getBalance: STAGE.funds,
    getMinimumBalanceForRentExemption: STAGE.funds,
    sendRawTransaction: STAGE.send,
    getTransaction: STAGE.observe,
    confirmTransaction: STAGE.confirm,
  };
}

/**
 * A trace as wall-clock milliseconds per stage, summing to the request's latency: overlapping calls (the two
 * funds-check reads run together) count only the time they add, and untimed work counts as the gap it leaves.
 */
export function stagesOf(trace: Trace, sentAt = trace.start, arrivedAt = trace.end): Map<string, number> {
  const parts = new Map<string, number>();
  const add = (stage: string, ms: number) => {
    if (ms > 0) parts.set(stage, (parts.get(stage) ?? 0) + ms);
  };
  add(STAGE.httpIn, trace.start - sentAt);
  let cursor = trace.start;
  for (const span of [...trace.spans].sort((a, b) => a.start - b.start)) {
    add(GAP_BEFORE[span.stage] ?? STAGE.other, span.start - cursor);
    add(span.stage, span.end - Math.max(span.start, cursor));
    cursor = Math.max(cursor, span.end);
  }
  add(STAGE.after, trace.end - cursor);
  add(STAGE.httpOut, arrivedAt - trace.end);
  return parts;
}

export interface StageFigures {
  stage: string;
  medianMs: number;
  meanMs: number;
  p99Ms: number;
  /** Of the mean latency. */
  share: number;
}

/** Per stage over all measured requests (a stage a request skipped counts 0 for it), in timeline order. */
export function breakdownOf(requests: Array<Map<string, number>>): { stages: StageFigures[]; totalMeanMs: number } {
  const order: string[] = [];
  for (const parts of requests) for (const stage of parts.keys()) if (!order.includes(stage)) order.push(stage);
  const totals = requests.map((parts) => [...parts.values()].reduce((a, b) => a + b, 0));
  const totalMeanMs = totals.reduce((a, b) => a + b, 0) / Math.max(totals.length, 1);
  const stages = order.map((stage) => {
    const values = requests.map((parts) => parts.get(stage) ?? 0).sort((a, b) => a - b);
    const meanMs = values.reduce((a, b) => a + b, 0) / Math.max(values.length, 1);
    return { stage, medianMs: median(values), meanMs, p99Ms: percentile(values, 99), share: meanMs / totalMeanMs };
  });
  return { stages, totalMeanMs };
}

