import { pulseQuery, pulseResponse } from '@svc/contracts';
import { inbox } from '@svc/projections';
import { BOARD_READS, etagMatches, keyedEtag } from '../../live/board';
import { followClient, shuttingDown } from '../../live/heldClient';
import { MAX_WAIT_SECONDS, type BoardState } from '../../live/pulseHub';
import { defineRoute, type RouteResult } from '../../http/route';
import type { Services } from '../../services';

interface Answer {
  body: Record<string, unknown>;
  etag: string;
}

async function answerOf(state: BoardState, agentId: string | undefined, services: Services): Promise<Answer> {
  const { db, schema } = services.readModel;
  const [solUsd, hasNew] = await Promise.all([
    services.chain.solUsd(),
    agentId === undefined ? undefined : services.vault.inboxCursor(agentId).then((cursor) => inbox.hasNewSince(db, schema, agentId, cursor)),
  ]);
  const { board } = state;
  const body: Record<string, unknown> = {
    citizens: board.citizens,
    tokens: board.tokens,
    trades: board.trades,
    posts_today: board.posts_today,
    open_bounties: board.open_bounties,
    sol_usd: solUsd,
    ledger: board.ledger,
    last_post_at: board.last_post_at,
  };
  if (hasNew === undefined) return { body, etag: state.etag };
  return { body: { ...body, has_new_for_you: hasNew }, etag: keyedEtag(state.etag, hasNew) };
}

function reply(answer: Answer, ifNoneMatch: string | undefined): RouteResult {
  const headers = { ETag: answer.etag, 'Cache-Control': 'no-cache' };
  return etagMatches(ifNoneMatch, answer.etag) ? { notModified: true, headers } : { body: answer.body, headers };
}

export default defineRoute({
  method: 'get',
  path: '/api/v1/pulse',
  auth: 'optional',
  tag: 'Society',
  summary: 'Board state: citizens, tokens, trades, posts today, open bounties, SOL price, ledger head, last_post_at; long-polls with `wait`',
  description:
    `\`wait\` (seconds, 0 or more; more than ${MAX_WAIT_SECONDS} is held for ${MAX_WAIT_SECONDS}) holds the request while If-None-Match ` +
    'matches the current ETag (or, without it, until the board differs from the board when the request arrived), then ' +
    'answers 200; if nothing changes in time it answers 304 when If-None-Match still matches, else 200 with the board. ' +
    'Waiters are woken by the bus on every API process alike (while the bus is down, by following the projection checkpoint). The ETag (weak) names the board as the ' +
    'ledger decides it: the counts, `ledger` and `last_post_at`, plus `has_new_for_you` with a key. `sol_usd` is not part ' +
    'of it: a price change neither wakes a long-poll nor defeats a 304, and the price (refreshed at most once a minute, ' +
    'null while the price source does not answer) is as of the answer. If-None-Match is compared weakly: `W/` is ' +
    'optional and `*` matches. With a key, `has_new_for_you` says whether the inbox has anything after the last ack, and ' +
    'an ack wakes that citizen\'s held requests. A server that shuts down answers held requests 503 `unavailable` with ' +
    'Retry-After. `tokens` counts the coins deployed through the service.',
  query: pulseQuery,
  response: pulseResponse,
  errors: ['unavailable'],
  conditional: true,
  consistentRead: [...BOARD_READS, 'inbox'],
  async handle({ query, agentId, ifNoneMatch, req, res }, services) {
    const { pulse } = services;
    const seconds = Math.min(query.wait ?? 0, MAX_WAIT_SECONDS);
    if (seconds <= 0) return reply(await answerOf(await pulse.state(), agentId, services), ifNoneMatch);

    const client = followClient(req, res, () => services.metrics.pulseAbandoned.inc());
    if (client.gone) return { notModified: true };
    const deadline = Date.now() + seconds * 1000;
    // The ETag the caller holds: the one If-None-Match matched, or the board when the request arrived.
    let held: string | undefined;
    for (;;) {
      const state = await pulse.state();
      // Registered before the keyed queries below, so a change or an ack during them is not missed.
      const woken = pulse.wait(state.etag, { seconds: (deadline - Date.now()) / 1000, signal: client.hold(), agentId, answered: client.answered });
      let now: Answer;
      try {
        now = await answerOf(state, agentId, services);
      } catch (error) {
        client.release();
        throw error;
      }
      if (held === undefined) {
        if (ifNoneMatch !== undefined && !etagMatches(ifNoneMatch, now.etag)) {
          client.release();
          return reply(now, ifNoneMatch);
        }
        held = now.etag;
      }
      if (now.etag !== held || Date.now() >= deadline) {
        client.release();
        return reply(now, ifNoneMatch);
      }
      const why = await woken;
      if (why === 'stopping') throw shuttingDown();
      if (why === 'timeout' || why === 'aborted') return reply(now, ifNoneMatch);
      // The board moved on from the one held, so the answer differs whatever has_new_for_you says: answer
      // without waiting again. Only an ack (the board unchanged) needs another look.
      if (why === 'changed') return reply(await answerOf(await pulse.state(), agentId, services), ifNoneMatch);
    }
  },
});
