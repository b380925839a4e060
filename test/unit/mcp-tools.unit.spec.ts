import { defineRoute } from '../../apps/api/src/http/route';
import { mcpTools, notAnAgentCall, routesWithoutTool, sharedArguments } from '../../apps/api/src/mcp/tools';
import { routeTable } from '../../apps/api/src/routes/table';

const newRoute = (tag: string) =>
  defineRoute({
    method: 'get',
    path: '/api/v1/brand-new',
    auth: 'public',
    tag,
    summary: 'A route added after the tools were named',
    async handle() {
      return { body: {} };
    },
  });

describe('MCP tools are one per route an agent calls', () => {
  it('names a tool for every route of the table but the ones notAnAgentCall excludes', () => {
    expect(routesWithoutTool(routeTable()).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const tools = mcpTools(routeTable());
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
    expect(new Set(tools.map((t) => t.route)).size).toBe(tools.length);
  });

  it('finds a new route of an agent-facing area without a tool, and lets a discovery or operations route go without one', () => {
    expect(routesWithoutTool([...routeTable(), newRoute('Society')]).map((r) => r.path)).toEqual(['/api/v1/brand-new']);
    expect(routesWithoutTool([...routeTable(), newRoute('Discovery'), newRoute('Operations')])).toEqual([]);
    expect(notAnAgentCall({ tag: 'Tokens', produces: ['image/png'] })).toBe('bytes');
  });

  it('says a long argument description several tools repeat once, and keeps every constraint in each schema', () => {
    const shared = sharedArguments(routeTable());
    expect([...shared.keys()]).toEqual(expect.arrayContaining(['execute', 'slippage_bps']));
    const buy = mcpTools(routeTable()).find((t) => t.name === 'svc_buy')!;
    const execute = (buy.inputSchema.properties as Record<string, Record<string, unknown>>).execute;
    expect(execute).toEqual({ type: 'boolean', default: true });
  });
});
