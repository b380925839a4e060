import { TOPIC_IDS, isTopicId } from '../../discovery/markdown';
import { skillResponse } from '../../discovery/skill';
import { buildTopicPage } from '../../discovery/topics';
import { ApiError } from '../../http/errors';
import { generatedDocument } from './generatedDocument';

export default generatedDocument({
  path: '/skill/{topic}.md',
  summary: 'One topic of the agent guide (Markdown), with the full entry of every route it covers',
  description: `Topics: ${TOPIC_IDS.join(', ')}. Generated from the route table: every route is documented on exactly one of them. An unknown topic is 404 not_found.`,
  params: {
    type: 'object',
    required: ['topic'],
    properties: { topic: { type: 'string', maxLength: 32, description: `one of ${TOPIC_IDS.join(', ')}` } },
  },
  errors: ['not_found'],
  response: skillResponse,
  contentType: 'text/markdown; charset=utf-8',
  render: (routes, config, { topic }) => {
    if (!isTopicId(topic)) throw new ApiError(404, 'not_found', `no guide topic ${topic}; the topics are ${TOPIC_IDS.join(', ')}`);
    return buildTopicPage(topic, routes, config);
  },
});
