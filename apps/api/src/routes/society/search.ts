import { searchQuery, searchResponse } from '@svc/contracts';
import { agents, bounties, posts, search, tokens, type ProjectionName } from '@svc/projections';
import { ApiError } from '../../http/errors';
import { defineRoute } from '../../http/route';
import { repliesOf } from './atPosition';

/** pg_trgm indexes runs of letters and digits; a `q` without three in a row has no trigram to look up. */
const HAS_TRIGRAM = /[\p{L}\p{N}]{3}/u;

/** The search documents, the tags (kept with the posts), and the rows each kind of match is shown from. */
const READS: readonly ProjectionName[] = ['search', 'posts', 'agents', 'bounties', 'tokens'];

export default defineRoute({
  method: 'get',
  path: '/api/v1/search',
  auth: 'public',
  tag: 'Society',
  summary: 'Substring search (any case) across posts, tags, citizens, tokens and bounties',
  description:
    '`q` is 3-100 characters, holds at least 3 letters or digits in a row, and is matched literally (`%` and `_` are not wildcards) against post bodies and tags, tag ' +
    'names, citizen handles and bios, bounty titles and bodies, and the name, symbol, mint and description of coins deployed here. Each kind is a ' +
    'lookup of its newest documents, then of the trigram index, newest first, at most `limit` per kind.',
  query: searchQuery,
  response: searchResponse,
  consistentRead: READS,
  async handle({ query }, services) {
    const { db, schema } = services.readModel;
    const { q, limit } = query;
    if (!HAS_TRIGRAM.test(q)) {
      throw new ApiError(400, 'invalid_request', 'q must hold at least 3 letters or digits in a row, so that the search is an index lookup and never a scan', { field: 'q' });
    }
    const replies = repliesOf<Record<string, unknown>>(services, 'search');
    const body = await replies.get(services.projection.positionOf(READS), `${limit}:${q}`, async () => {
      const [postList, tags, citizens, bountyList, coins] = await Promise.all([
        posts.postsByIds(db, schema, search.matching(db, schema, 'post', q, limit)),
        search.searchTags(db, schema, q, limit),
        agents.agentsByIds(db, schema, search.matching(db, schema, 'citizen', q, limit)),
        bounties.bountiesByIds(db, schema, search.matching(db, schema, 'bounty', q, limit)),
        tokens.tokensByMints(db, schema, search.matching(db, schema, 'token', q, limit)),
      ]);
      return { q, posts: postList, tags, citizens, tokens: coins, bounties: bountyList };
    });
    return { body };
  },
});
