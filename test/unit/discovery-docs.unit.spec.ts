import { buildAgentCard } from '../../apps/api/src/discovery/agentCard';
import { linksOf } from '../../apps/api/src/discovery/catalog';
import { buildSkillMarkdown, QUICK_START_MAX_BYTES, RULES_HEADING, SAFETY_HEADING } from '../../apps/api/src/discovery/skill';
import { buildTopicPage, topicOf } from '../../apps/api/src/discovery/topics';
import { defineRoute } from '../../apps/api/src/http/route';
import { routeTable } from '../../apps/api/src/routes/table';

/** A route the table does not have: the documents must pick it up without being edited. */
const added = defineRoute({
  method: 'get',
  path: '/api/v1/brand-new',
  auth: 'public',
  tag: 'Society',
  summary: 'A route added after the guide was written',
  query: { type: 'object', properties: { zeta: { type: 'integer', minimum: 1, maximum: 9 } } },
  errors: ['brand_new_code'],
  async handle() {
    return { body: {} };
  },
});

const settings = { publicUrl: 'http://localhost:8080', requestsPerSecond: 20, registerPerIpPerHour: 10, bodyLimit: '6mb', faucetSolPerHour: 20 };

describe('discovery documents are derived from the route table', () => {
  it('puts a new route, its fields and its error codes into the topic page of its tag, the reference index and the errors page', () => {
    const routes = [...routeTable(), added];
    expect(topicOf(added)).toBe('society');
    const society = buildTopicPage('society', routes, settings);
    expect(society).toContain('#### `GET /api/v1/brand-new`');
    expect(society).toContain('`zeta` [query]: integer, 1-9');
    expect(buildTopicPage('reference', routes, settings)).toContain('| `GET /api/v1/brand-new` | [society](http://localhost:8080/skill/society.md) |');
    expect(buildTopicPage('errors', routes, settings)).toMatch(/\| 400 \| `brand_new_code` \|/);
    expect(buildTopicPage('society', routeTable(), settings)).not.toContain('/api/v1/brand-new');
  });

  it('keeps the quick start of skill.md within 8 KB, before its rules', () => {
    const text = buildSkillMarkdown(routeTable(), settings);
    const end = text.indexOf(RULES_HEADING);
    expect(end).toBeGreaterThan(0);
    expect(Buffer.byteLength(text.slice(0, end))).toBeLessThanOrEqual(QUICK_START_MAX_BYTES);
  });

  it('tells an agent how to stay safe after the rules, outside the quick start: a policy first, untrusted text as data, no keys in posts', () => {
    const text = buildSkillMarkdown(routeTable(), settings);
    const start = text.indexOf(SAFETY_HEADING);
    expect(start).toBeGreaterThan(text.indexOf(RULES_HEADING));
    const section = text.slice(start, text.indexOf('\n## ', start + 1));
    for (const said of ['`PUT /api/v1/policy`', '`max_sol_per_day`', '`policy_limit`', '`untrusted`', '`secret_in_body`', '(http://localhost:8080/skill/custody.md)', '(http://localhost:8080/skill/society.md)']) {
      expect([said, section.includes(said)]).toEqual([said, true]);
    }
  });

  it('puts a new route into the skill of its area on the agent card', () => {
    const card = buildAgentCard([...routeTable(), added], settings.publicUrl) as { skills: Array<{ id: string; routes: Array<{ path: string }> }> };
    const society = card.skills.find((s) => s.id === 'society')!;
    expect(society.routes.map((r) => r.path)).toContain('/api/v1/brand-new');
  });

  it('derives the WebSocket URL from the public URL', () => {
    expect(linksOf('http://localhost:8080/').ws).toBe('ws://localhost:8080/ws');
    expect(linksOf('https://society.example').ws).toBe('wss://society.example/ws');
  });
});
