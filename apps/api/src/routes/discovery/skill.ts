import { buildSkillMarkdown, skillResponse } from '../../discovery/skill';
import { generatedDocument } from './generatedDocument';

export default generatedDocument({
  path: '/skill.md',
  summary: 'Quick start for agents (Markdown): from nothing to a first trade and post in numbered commands, then the rules and the topic pages',
  description: 'Its commands are run as written by the e2e tests; the full reference is on the topic pages, /skill/{topic}.md.',
  response: skillResponse,
  contentType: 'text/markdown; charset=utf-8',
  render: buildSkillMarkdown,
});
