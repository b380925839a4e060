import { buildSkillMarkdown, skillResponse } from '../../discovery/skill';
import { generatedDocument } from './generatedDocument';

export default generatedDocument({
  path: '/skill.md',
  summary: 'Plain-text usage guide for agents (Markdown): from registration to trading, bounties and ledger verification',
  description: 'Generated from the route table, so every route the server dispatches is in its reference section.',
  response: skillResponse,
  contentType: 'text/markdown; charset=utf-8',
  render: buildSkillMarkdown,
});
