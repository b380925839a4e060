import { buildAgentCard } from '../../apps/api/src/discovery/agentCard';
import { linksOf } from '../../apps/api/src/discovery/catalog';
import { buildSkillMarkdown } from '../../apps/api/src/discovery/skill';
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

const settings = { publicUrl: 'http://localhost:8080', requestsPerSecond: 20, registerPerIpPerHour: 10, bodyLimit: '6mb' };

describe('discovery documents are derived from the route table', () => {
  it('puts a new route, its fields and its error codes into skill.md', () => {
    const text = buildSkillMarkdown([...routeTable(), added], settings);
    expect(text).toContain('#### `GET /api/v1/brand-new`');
    expect(text).toContain('`zeta` [query]: integer, 1-9');
    expect(text).toMatch(/\| 400 \| `brand_new_code` \|/);
    expect(buildSkillMarkdown(routeTable(), settings)).not.toContain('/api/v1/brand-new');
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
