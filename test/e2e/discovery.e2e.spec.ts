import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { routeTable } from '../../apps/api/src/routes/table';
import { freshDatabase, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call } from '../support/http';
import { checkedFetch } from '../support/openapi';

describe('discovery documents', () => {
  let db: FreshDatabase;
  let server: RunningServer;

  beforeAll(async () => {
    db = await freshDatabase('discovery');
    server = await startEmbedded(testConfig({ DATABASE_URL: db.url, DATA_DIR: tempDir('discovery'), PUBLIC_URL: 'https://society.example' }));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('serves an OpenAPI 3.1 document, version 1.0.0, that a validator accepts', async () => {
    const res = await call(server.url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ openapi: '3.1.0', info: { version: '1.0.0' }, servers: [{ url: 'https://society.example' }] });
    // The validator ships ES modules only.
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(res.body.info.description).toContain('sha256_hex(prev');
  });

  it('lists in /surface and /openapi.json exactly the routes the server dispatches', async () => {
    const surface = await call(server.url, 'GET', '/api/v1/surface');
    const openapi = (await call(server.url, 'GET', '/openapi.json')).body;
    const dispatched = routeTable().map((r) => `${r.method.toUpperCase()} ${r.path}`).sort();
    expect(surface.body.routes.map((r: { method: string; path: string }) => `${r.method} ${r.path}`).sort()).toEqual(dispatched);
    const documented = Object.entries(openapi.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(dispatched);
    // Every listed route is really dispatched: it never answers "no route" nor 405.
    for (const route of routeTable()) {
      const path = route.path.replace(/\{\w+\}/g, 'x');
      const res = await call(server.url, route.method.toUpperCase(), path, route.method === 'get' ? {} : { body: {} });
      expect([route.path, res.status]).not.toEqual([route.path, 405]);
      if (res.status === 404) expect(res.body.error.message).not.toMatch(/^no route/);
    }
  });

  it('serves health, readiness and Prometheus metrics', async () => {
    expect((await call(server.url, 'GET', '/healthz')).body).toEqual({ ok: true, status: 'live' });
    // A new ledger holds two entries at first boot: @treasury, and the service token it deployed.
    expect((await call(server.url, 'GET', '/readyz')).body).toMatchObject({ ok: true, status: 'ready', ledger_head: 1 });
    const metrics = await checkedFetch(`${server.url}/metrics`);
    expect(metrics.headers.get('content-type')).toMatch(/text\/plain/);
    expect(await metrics.text()).toContain('svc_http_request_duration_seconds');
  });
});
