import type { Logger } from 'pino';
import { readyzResponse, type ReadinessPart } from '@svc/contracts';
import { AnchorRunnerStore } from '@svc/marketdata';
import { ping } from '@svc/readmodel';
import { eventStoreIsSeparate } from '@svc/runtime';
import { ApiError } from '../../http/errors';
import { treasuryReadiness } from '../../treasury/deployTable';
import { defineRoute } from '../../http/route';
import type { Services } from '../../services';

/** Anchoring on Solana: off, running, or delayed and why (the runner writes it, whichever process that is). */
async function anchorReadiness({ config, database }: Services): Promise<{ anchors: 'ok' | 'off' | 'delayed'; anchors_reason?: string }> {
  if (config.anchorEveryEntries === 0) return { anchors: 'off' };
  const delay = await (await AnchorRunnerStore.forDatabase(database.db)).delayed();
  return delay ? { anchors: 'delayed', anchors_reason: delay.reason } : { anchors: 'ok' };
}

/** Reads past this are stale beyond what read-your-writes can hide: stop sending traffic here. */
const STALLED_MS = 60_000;

export default defineRoute({
  method: 'get',
  path: '/readyz',
  auth: 'public',
  tag: 'Operations',
  summary: 'Readiness: the database and event store answer and the read models are moving; reports the ledger head, projection lag, bus and chain state',
  description:
    '503 not_ready, naming the failing `part`, while the database (`database`) or a separate event store (`event_store`) does not ' +
    'answer, or while a read model has stood still behind the ledger for a minute (`read_models`). A bus (Redis) that does ' +
    'not answer leaves the process ready, reported as `bus: "degraded"`; a Solana RPC that does not answer too, reported as ' +
    '`chain: "unreachable"`; so does a treasury that has not paid for the shared lookup table of long deploys, reported as ' +
    '`treasury: "unfunded"` with the `treasury_address` to fund; anchoring of the ledger on Solana that waits (an unfunded treasury) ' +
    'is `anchors: "delayed"` with `anchors_reason`.',
  response: readyzResponse,
  errors: ['not_ready'],
  async handle(_input, services) {
    const { database, store, projection, chain, config, log } = services;
    // Cached and bounded in time, so asked alongside the stores rather than after them.
    const chainAnswers = chain.reachable();
    await answering('database', () => ping(database), log);
    const head = await answering(eventStoreIsSeparate(config) ? 'event_store' : 'database', () => store.headRevision('ledger'), log);
    const stalled = await answering('database', () => projection.stalledFor(head), log);
    const treasury = await answering('database', () => treasuryReadiness(services), log);
    const anchoring = await answering('database', () => anchorReadiness(services), log);
    if (stalled > STALLED_MS) throw notReady('read_models', `a read model has been behind the ledger for ${Math.round(stalled / 1000)} s without moving`);
    return {
      body: {
        status: 'ready',
        ledger_head: head,
        projected: projection.seq,
        lag: Math.max(0, head - projection.seq),
        read_models: projection.readModels,
        bus: projection.busHealthy ? 'ok' : 'degraded',
        chain: (await chainAnswers) ? 'ok' : 'unreachable',
        ...treasury,
        ...anchoring,
      },
    };
  },
});

const SILENT: Record<'database' | 'event_store', string> = {
  database: 'the database does not answer',
  event_store: 'the event store does not answer',
};

/** The probe's result; its failure as not_ready naming the part, since a driver's message names hosts and ports. */
async function answering<T>(part: 'database' | 'event_store', probe: () => Promise<T>, log: Logger): Promise<T> {
  try {
    return await probe();
  } catch (error) {
    log.warn({ err: error, part }, 'not ready');
    throw notReady(part, SILENT[part]);
  }
}

function notReady(part: ReadinessPart, reason: string): ApiError {
  return new ApiError(503, 'not_ready', `not ready: ${reason}`, { part });
}
