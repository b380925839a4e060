import { createHash } from 'node:crypto';
import { LONG_POLL_MAX_SECONDS, changesQuery, changesResponse, type RequestOf } from '@svc/contracts';
import { entries, readCheckpoint } from '@svc/projections';
import { defineRoute, type RouteResult } from '../../http/route';
import { etagMatches } from '../../live/board';
import { followClient, shuttingDown } from '../../live/heldClient';
import type { Services } from '../../services';

type ChangesQuery = RequestOf<typeof changesQuery>;

interface Page {
  changes: entries.ServedEntry[];
  head: number;
  nextAfter: number;
  hasMore: boolean;
}

async function pageOf(query: ChangesQuery, { readModel: { db, schema } }: Services): Promise<Page> {
  // Everything served is at or below this head, so the ETag names exactly what the body holds.
  const head = await readCheckpoint(db, schema, ['entries']);
  const changes = await entries.entriesSince(db, schema, { afterSeq: query.after, since: query.since, upTo: head, limit: query.limit });
  // A short page holds everything up to the head that matched, so the next read starts after the head:
  // a `since` that matched nothing must not send the client back to seq 0.
  const full = changes.length === query.limit;
  const nextAfter = full ? changes[changes.length - 1]!.seq : Math.max(query.after ?? -1, head);
  return { changes, head, nextAfter, hasMore: full && nextAfter < head };
}

/**
 * The ETag names the ledger position the reply covers (`next_after`, `+` when more follows) and the query it
 * answers, so that the same query answers 304 only while its reply is the same.
 */
function etagOf(page: Page, query: ChangesQuery): string {
  const asked = createHash('sha1').update(JSON.stringify([query.since, query.after, query.limit])).digest('hex').slice(0, 12);
  return `W/"${page.nextAfter}${page.hasMore ? '+' : ''}-${asked}"`;
}

/** The positions the presented tags name, whatever query they were given for. */
function positionsIn(ifNoneMatch: string): number[] {
  return [...ifNoneMatch.matchAll(/(?:^|,)\s*(?:W\/)?"(-?\d+)\+?-[0-9a-f]*"/g)].map((m) => Number(m[1]));
}

/**
 * 304 for the same query while its reply is unchanged, and for any page that holds nothing when the caller's tag
 * names the position it would resume from: `?after=<next_after>` with the last reply's ETag, while nothing is new.
 * An empty page hides nothing, so a 304 for it can never keep an entry from the client.
 */
function notModified(page: Page, tag: string, ifNoneMatch: string | undefined): boolean {
  if (etagMatches(ifNoneMatch, tag)) return true;
  return ifNoneMatch !== undefined && page.changes.length === 0 && positionsIn(ifNoneMatch).includes(page.nextAfter);
}

export default defineRoute({
  method: 'get',
  path: '/api/v1/changes',
  auth: 'public',
  tag: 'Society',
  summary: 'Every post, action, bounty and ledger event since `since` (ms) or after `after` (seq), in ledger order; long-polls with `wait`',
  description:
    'Each item is a full ledger entry {seq, type, kind, at, actor, data, prev, hash}. `after` resumes exactly; `since` ' +
    'filters by time (inclusive). The ETag (weak) names the ledger position the reply covers: `?after=<next_after>` with ' +
    'If-None-Match set to the last reply\'s ETag answers 304 while nothing is new, and so does the same query while its ' +
    `reply is unchanged. \`wait\` (seconds, at most ${LONG_POLL_MAX_SECONDS}) holds a request that would find nothing ` +
    'past `after` until an entry lands or the time runs out, as /pulse does. A server that shuts down answers held ' +
    'requests 503 `unavailable` with Retry-After.',
  query: changesQuery,
  response: changesResponse,
  errors: ['unavailable'],
  conditional: true,
  consistentRead: ['entries'],
  async handle({ query, ifNoneMatch, req, res }, services): Promise<RouteResult> {
    let page = await pageOf(query, services);
    const seconds = query.wait ?? 0;
    if (seconds > 0 && page.changes.length === 0) {
      const client = followClient(req, res, () => undefined);
      const deadline = Date.now() + seconds * 1000;
      // A page a `since` filters empty waits on for the next entry, until the time runs out.
      while (!client.gone && page.changes.length === 0 && Date.now() < deadline) {
        const why = await services.pulse.waitPast(page.nextAfter, { seconds: (deadline - Date.now()) / 1000, signal: client.hold(), answered: client.answered });
        if (why === 'stopping') throw shuttingDown();
        if (why !== 'changed') break;
        page = await pageOf(query, services);
      }
      client.release();
    }
    const tag = etagOf(page, query);
    if (notModified(page, tag, ifNoneMatch)) return { notModified: true, headers: { ETag: tag } };
    return {
      headers: { ETag: tag, 'Cache-Control': 'no-cache' },
      body: { changes: page.changes, head: { seq: page.head }, next_after: page.nextAfter, has_more: page.hasMore },
    };
  },
});
