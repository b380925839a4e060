import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { attestQuery, attestResponse } from '@svc/contracts';
import { HASH_CONSTRUCTION } from '@svc/ledger';
import { anchors } from '@svc/projections';
import { ApiError } from '../../http/errors';
import { defineRoute } from '../../http/route';
import { anchorReply } from '../../records/anchorView';

// A full pass reads the whole ledger: one start per address per minute. Counted per process; the record
// store still lets only one pass run at a time across processes.
const fullStarts = new RateLimiterMemory({ points: 1, duration: 60 });

async function allowFullStart(ip: string): Promise<void> {
  try {
    await fullStarts.consume(ip);
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    const seconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
    throw new ApiError(429, 'rate_limited', `a full re-verification was started from this address; retry in ${seconds} s`, {}, { 'Retry-After': String(seconds) });
  }
}

export default defineRoute({
  method: 'get',
  path: '/api/v1/attest',
  auth: 'public',
  tag: 'Records',
  summary: 'Head hash, chain length and the result of the integrity check',
  description:
    `${HASH_CONSTRUCTION}. Verification is incremental: the verified prefix is remembered (across restarts) and only new entries are hashed, ` +
    'unless a stored row inside it changed (then it starts again from seq 0); `verified` names both ranges. ' +
    'A row changed with the triggers bypassed leaves no mark, so a full re-verification from seq 0 runs in the background ' +
    '(ATTEST_FULL_EVERY_MS, and `?full=true`); `full` reports its progress and result, and a bad entry it finds is reported by `verified` from then on. ' +
    'Anyone can repeat the check from /api/v1/changes?after=-1 alone (npm run audit -- --url <base url>). `anchor` is the latest commitment ' +
    'of the head on Solana (GET /api/v1/anchors) and `unanchored` how many entries follow it; `--rpc <solana rpc>` also checks the anchors.',
  query: attestQuery,
  response: attestResponse,
  errors: ['rate_limited'],
  async handle({ query, req }, services) {
    const { attestor, readModel } = services;
    if (query.full && !(await attestor.fullRunning())) {
      await allowFullStart(req.ip ?? 'unknown');
      await attestor.startFull('request');
    }
    const [attestation, anchor] = await Promise.all([attestor.attest(), anchors.latestAnchor(readModel.db, readModel.schema)]);
    return { body: { ...attestation, anchor: anchor && anchorReply(anchor, services), unanchored: Math.max(0, attestation.length - 1 - (anchor?.seq ?? -1)) } };
  },
});
