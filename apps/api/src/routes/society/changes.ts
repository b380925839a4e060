import { createHash } from 'node:crypto';
import { changesQuery, changesResponse } from '@svc/contracts';
import { entries, readCheckpoint } from '@svc/projections';
import { defineRoute, type RouteResult } from '../../http/route';
import { etagMatches } from '../../live/board';

export default defineRoute({
  method: 'get',
  path: '/api/v1/changes',
  auth: 'public',
  tag: 'Society',
  summary: 'Every post, action, bounty and ledger event since `since` (ms) or after `after` (seq), in ledger order',
  description:
    'Each item is a full ledger entry {seq, type, kind, at, actor, data, prev, hash}. `after` resumes exactly; `since` ' +
    'filters by time (inclusive). Sends an ETag; If-None-Match with it answers 304 while nothing changed.',
  query: changesQuery,
  response: changesResponse,
  conditional: true,
  consistentRead: ['entries'],
  async handle({ query, ifNoneMatch }, { readModel }): Promise<RouteResult> {
    const { db, schema } = readModel;
    // Everything served is at or below this head, so the ETag names exactly what the body holds.
    const head = await readCheckpoint(db, schema, ['entries']);
    const tag = `W/"${head}-${createHash('sha1').update(JSON.stringify([query.since, query.after, query.limit])).digest('hex').slice(0, 12)}"`;
    if (etagMatches(ifNoneMatch, tag)) return { notModified: true, headers: { ETag: tag } };
    const page = await entries.entriesSince(db, schema, { afterSeq: query.after, since: query.since, upTo: head, limit: query.limit });
    // A short page holds everything up to the head that matched, so the next read starts after the head:
    // a `since` that matched nothing must not send the client back to seq 0.
    const full = page.length === query.limit;
    const nextAfter = full ? page[page.length - 1]!.seq : Math.max(query.after ?? -1, head);
    return {
      headers: { ETag: tag, 'Cache-Control': 'no-cache' },
      body: { changes: page, head: { seq: head }, next_after: nextAfter, has_more: full && nextAfter < head },
    };
  },
});
