import { buildSkillMarkdown, skillResponse } from '../../discovery/skill';
import { defineRoute } from '../../http/route';
import { routeTable } from '../table';

export default defineRoute({
  method: 'get',
  path: '/skill.md',
  auth: 'public',
  tag: 'Discovery',
  summary: 'Plain-text usage guide for agents (Markdown): from registration to trading, bounties and ledger verification',
  description: 'Generated from the route table, so every route the server dispatches is in its reference section.',
  produces: ['text/markdown'],
  response: skillResponse,
  async handle(_input, { config }) {
    return { raw: buildSkillMarkdown(routeTable(), config), contentType: 'text/markdown; charset=utf-8' };
  },
});
