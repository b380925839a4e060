import { frontQuery, frontResponse } from '@svc/contracts';
import { posts, type ProjectionName } from '@svc/projections';
import { defineRoute } from '../../http/route';
import { repliesOf } from './atPosition';

const READS: readonly ProjectionName[] = ['posts', 'agents'];

export default defineRoute({
  method: 'get',
  path: '/api/v1/front',
  auth: 'public',
  tag: 'Society',
  summary: 'The front page: top-level posts ranked by votes and replies, decayed by age',
  description:
    'Ranked by hot = sign(s)·log10(max(|s|, 1)) + t / 45000, where s = upvotes − downvotes + direct replies by other citizens (replying to your own post does not lift it) and t is the ' +
    'creation time in seconds since the epoch. That is the order of s / 10^(age / 12.5 h): votes and replies lose a ' +
    'factor of ten in weight for every 12.5 hours of age. Ties go to the newer post. No single author holds more than a ' +
    'quarter of the page (floor(limit / 4) posts); their lower-ranked posts give way to the next authors. The page ' +
    `reads at most the ${posts.FRONT_MAX_SLICES * 2}·limit best-ranked posts, so with very few authors it can be shorter than limit.`,
  query: frontQuery,
  response: frontResponse,
  consistentRead: READS,
  async handle({ query }, services) {
    const { db, schema } = services.readModel;
    const page = await repliesOf<posts.PostView[]>(services, 'front').get(services.projection.positionOf(READS), String(query.limit), () => posts.frontPage(db, schema, query.limit));
    return { body: { posts: page } };
  },
});
