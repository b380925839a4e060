import { pulseQuery, pulseResponse } from '@svc/contracts';
import { inbox } from '@svc/projections';
import { etagOf } from '../../live/board';
import { MAX_WAIT_SECONDS, type BoardState } from '../../live/pulseHub';
import { defineRoute, type RouteResult } from '../../http/route';
import type { Services } from '../../services';

async function reply(state: BoardState, agentId: string | undefined, services: Services, ifNoneMatch: string | undefined): Promise<RouteResult> {
  let body: Record<string, unknown> = { ...state.board };
  let etag = state.etag;
  if (agentId) {
    const { db, schema } = services.readModel;
    body = { ...body, has_new_for_you: await inbox.hasNewSince(db, schema, agentId, await services.vault.inboxCursor(agentId)) };
    etag = etagOf(body);
  }
  const headers = { ETag: etag, 'Cache-Control': 'no-cache' };
  if (ifNoneMatch !== undefined && ifNoneMatch.split(/\s*,\s*/).includes(etag)) return { notModified: true, headers };
  return { body, headers };
}

export default defineRoute<unknown, { wait?: number }>({
  method: 'get',
  path: '/api/v1/pulse',
  auth: 'optional',
  tag: 'Society',
  summary: 'Board state: citizens, tokens, trades, posts today, open bounties, SOL price, ledger head, last_post_at; long-polls with `wait`',
  description:
    `\`wait\` (seconds, 0-${MAX_WAIT_SECONDS}; larger values are held for ${MAX_WAIT_SECONDS}) holds the request until the board differs ` +
    'from the one named by If-None-Match (or, without it, from the board when the request arrived), then answers 200; ' +
    'if nothing changes in time it answers 304 when If-None-Match still matches, else 200 with the board. Waiters are ' +
    'woken by the bus, not by polling. With a key, `has_new_for_you` says whether the inbox has anything after the ' +
    'last ack. `tokens` counts coins launched through the service and stays 0 until trading lands.',
  query: pulseQuery,
  response: pulseResponse,
  conditional: true,
  consistentRead: true,
  async handle({ query, agentId, req, res }, services) {
    const ifNoneMatch = req.get('if-none-match');
    const seconds = Math.min(query.wait ?? 0, MAX_WAIT_SECONDS);
    const now = await services.pulse.state();
    if (seconds > 0) {
      const current = (await reply(now, agentId, services, undefined)).headers!.ETag!;
      const baseline = ifNoneMatch ?? current;
      if (baseline.split(/\s*,\s*/).includes(current)) {
        const gone = new AbortController();
        res.once('close', () => gone.abort());
        const woken = await services.pulse.wait(now.etag, seconds, gone.signal);
        return reply(woken ?? (await services.pulse.state()), agentId, services, ifNoneMatch);
      }
    }
    return reply(now, agentId, services, ifNoneMatch);
  },
});
