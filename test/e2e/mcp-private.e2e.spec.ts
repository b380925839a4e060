import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { registerCitizen, type TestCitizen } from '../support/citizens';
import { DoorbellReceiver, RecordedAttempts } from '../support/doorbellReceiver';
import { call } from '../support/http';
import { callTool, connectMcp, wordsInPlace, type ToolReply } from '../support/mcp';
import { embeddedService, type EmbeddedService } from '../support/servers';

/**
 * The tools of a citizen's private things over MCP: its key, its notes and its doorbells. Each write goes beside the
 * same write over HTTP by another citizen, and the replies are equal but for what names the citizen's own things.
 */
describe('MCP: rotate, memory_delete and the doorbell tools', () => {
  let service: EmbeddedService;
  let receiver: DoorbellReceiver;
  let base: string;
  const attempts = new RecordedAttempts();
  const clients: Client[] = [];
  const tool = (client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolReply> => callTool(base, client, name, args);
  async function mcpFor(who: TestCitizen): Promise<Client> {
    const client = await connectMcp(base, '/mcp', who.key);
    clients.push(client);
    return client;
  }
  const ok = (result: ToolReply) => {
    expect([result.isError, result.structuredContent?.ok]).toEqual([undefined, true]);
    return result.structuredContent!;
  };

  beforeAll(async () => {
    receiver = await DoorbellReceiver.start();
    service = await embeddedService(
      'mcp_private',
      { DOORBELL_ALLOW_LOOPBACK: 'true', DOORBELL_CA_FILE: receiver.caFile },
      { doorbellWorker: { backoffBaseMs: 25, backoffMaxMs: 200, onAttemptRecorded: attempts.record } },
    );
    base = service.server.url;
  }, 90_000);
  afterAll(async () => {
    for (const client of clients) await client.close();
    await service?.close();
    await receiver?.close();
  });

  it('rotates the key: the reply is HTTP’s but for the new key, the old key stops working and the new one works over MCP', async () => {
    const [carol, dave] = [await registerCitizen(base, 'mcpk'), await registerCitizen(base, 'mcpk')];
    const rotated = ok(await tool(await mcpFor(carol), 'svc_rotate'));
    const beside = await call(base, 'POST', '/api/v1/rotate', { key: dave.key, body: {} });
    expect(rotated).toEqual({ ...beside.body, api_key: expect.stringMatching(/^svc_sk_/) });
    expect(rotated.api_key).not.toBe(carol.key);

    expect((await call(base, 'GET', '/api/v1/me', { key: carol.key })).status).toBe(401);
    const me = await tool(await mcpFor({ ...carol, key: rotated.api_key }), 'svc_me');
    expect(wordsInPlace(me.structuredContent)).toEqual((await call(base, 'GET', '/api/v1/me', { key: rotated.api_key })).body);
  });

  it('deletes a note as DELETE /api/v1/memory does, and the note is gone at once', async () => {
    const [erin, frank] = [await registerCitizen(base, 'mcpm'), await registerCitizen(base, 'mcpm')];
    for (const who of [erin, frank]) expect((await call(base, 'POST', '/api/v1/memory', { key: who.key, body: { key: 'plan', value: 'buy low' } })).status).toBe(200);
    const deleted = ok(await tool(await mcpFor(erin), 'svc_memory_delete', { key: 'plan' }));
    expect(deleted).toEqual((await call(base, 'DELETE', '/api/v1/memory?key=plan', { key: frank.key })).body);
    expect((await call(base, 'GET', '/api/v1/memory?key=plan', { key: erin.key })).status).toBe(404);
    const again = await tool(clients.at(-1)!, 'svc_memory_delete', { key: 'plan' });
    expect([again.isError, again.structuredContent]).toEqual([true, (await call(base, 'DELETE', '/api/v1/memory?key=plan', { key: frank.key })).body]);
  });

  it('registers, lists, reads the deliveries of, replays and removes a doorbell as the HTTP routes do', async () => {
    const [gina, hank] = [await registerCitizen(base, 'mcpd'), await registerCitizen(base, 'mcpd')];
    const mcp = await mcpFor(gina);
    /** What differs between two citizens' doorbells: which doorbell, its URL and when it was made. */
    const own = { id: expect.any(String), url: expect.any(String), created_at: expect.any(Number) };

    const ring = { kinds: ['post'], secret: 'mcp-doorbell-secret' };
    const registered = ok(await tool(mcp, 'svc_doorbell_register', { url: receiver.url('/gina'), ...ring }));
    const beside = await call(base, 'POST', '/api/v1/doorbell', { key: hank.key, body: { url: receiver.url('/hank'), ...ring } });
    expect(beside.status).toBe(201);
    expect(registered).toEqual({ ...beside.body, doorbell: { ...beside.body.doorbell, ...own } });
    expect(registered.doorbell.url).toBe(receiver.url('/gina'));
    const door = registered.doorbell.id as string;
    expect(ok(await tool(mcp, 'svc_doorbell_list'))).toEqual((await call(base, 'GET', '/api/v1/doorbell', { key: gina.key })).body);

    // One post rings both doorbells once; the log is read once the worker recorded both deliveries.
    expect((await call(base, 'POST', '/api/v1/posts', { key: gina.key, body: { body: 'ring' } })).status).toBe(201);
    const hankDoor = beside.body.doorbell.id as string;
    await attempts.waitFor(() => [door, hankDoor].every((id) => attempts.of(id).some((a) => a.ok)));
    const deliveries = ok(await tool(mcp, 'svc_doorbell_deliveries', { id: door }));
    expect(deliveries).toEqual((await call(base, 'GET', `/api/v1/doorbell/deliveries?id=${door}`, { key: gina.key })).body);
    expect(deliveries.deliveries).toEqual([expect.objectContaining({ doorbell_id: door, status: 'delivered' })]);

    const replayed = ok(await tool(mcp, 'svc_doorbell_replay', { delivery_id: deliveries.deliveries[0].id }));
    const hankDelivery = (await call(base, 'GET', '/api/v1/doorbell/deliveries', { key: hank.key })).body.deliveries[0].id as string;
    expect(replayed).toEqual((await call(base, 'POST', '/api/v1/doorbell/replay', { key: hank.key, body: { delivery_id: hankDelivery } })).body);
    expect(replayed.requeued).toBe(1);
    await attempts.waitFor(() => [door, hankDoor].every((id) => attempts.of(id).filter((a) => a.ok).length === 2));
    expect(receiver.on('/gina')).toHaveLength(2);

    const removed = ok(await tool(mcp, 'svc_doorbell_remove', { id: door }));
    const removedBeside = await call(base, 'DELETE', `/api/v1/doorbell?id=${hankDoor}`, { key: hank.key });
    expect(removed).toEqual({ ...removedBeside.body, removed: { id: door, url: receiver.url('/gina') } });
    expect((await call(base, 'GET', '/api/v1/doorbell', { key: gina.key })).body.doorbells).toEqual([]);
  });
});
