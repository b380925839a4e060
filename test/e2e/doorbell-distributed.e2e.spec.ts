import { randomBytes } from 'node:crypto';
import { startProjector, type RunningProjector } from '@svc/app-projector';
import { startServer, type RunningApi } from '../../apps/api/src/server';
import { DoorbellReceiver, timestampedSignature } from '../support/doorbellReceiver';
import { startChild, type ChildService } from '../support/spawn';
import { until } from '../support/until';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call as rawCall, uniqueHandle } from '../support/http';

jest.setTimeout(60_000);

describe('the distributed shape: doorbells delivered by `npm run start:workers` in its own process', () => {
  let db: FreshDatabase;
  let api: RunningApi;
  let projector: RunningProjector;
  let workers: ChildService;
  let receiver: DoorbellReceiver;

  beforeAll(async () => {
    receiver = await DoorbellReceiver.start();
    db = await freshDatabase('doorbell_dist');
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL,
      REDIS_PREFIX: `t${randomBytes(4).toString('hex')}`,
      SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
      DATA_DIR: tempDir('doorbell-dist'),
      DOORBELL_ALLOW_LOOPBACK: 'true',
      DOORBELL_CA_FILE: receiver.caFile,
    };
    // The API alone (no in-process worker), a projector beside it, and the worker process.
    api = await startServer(testConfig(env));
    const { services } = api;
    projector = await startProjector({ database: services.database, store: services.store, bus: services.bus, schema: services.readModel.schema, batchSize: 500, log: services.log });
    workers = await startChild('apps/workers/src/main.ts', [], env, 'doorbell worker started');
  }, 90_000);
  afterAll(async () => {
    await workers?.stop();
    await projector?.stop();
    await api?.close();
    await receiver?.close();
    await db?.drop();
  });

  it('delivers a signed post, and a replay asked of the API reaches the worker process', async () => {
    const reg = await rawCall(api.url, 'POST', '/api/v1/register', { body: { handle: uniqueHandle('dist'), model: 'm' } });
    const key = reg.body.api_key as string;
    const secret = `whsec_${randomBytes(12).toString('hex')}`;
    expect((await rawCall(api.url, 'POST', '/api/v1/doorbell', { key, body: { url: receiver.url('/dist'), secret } })).status).toBe(201);
    const seq = (await rawCall(api.url, 'POST', '/api/v1/posts', { key, body: { body: 'from afar' } })).body.post.seq;
    await receiver.waitFor(() => receiver.on('/dist').length === 1);
    const [first] = receiver.on('/dist');
    expect(first!.json).toMatchObject({ kind: 'post', seq, data: { body: 'from afar' } });
    expect(first!.headers['x-svc-signature']).toBe(timestampedSignature(first!, secret));
    // The worker records the answer right after it arrives; a delivery still pending is not queued twice.
    // A bounded poll of the log: the worker is another process, and no event of its reaches this one.
    const delivered = async () => (await rawCall(api.url, 'GET', '/api/v1/doorbell/deliveries', { key })).body.deliveries[0]?.status === 'delivered';
    await until('the delivery to be recorded as delivered', 20_000, delivered, 25);
    const replay = await rawCall(api.url, 'POST', '/api/v1/doorbell/replay', { key, body: { delivery_id: first!.headers['x-svc-delivery'] } });
    expect(replay.body.requeued).toBe(1);
    await receiver.waitFor(() => receiver.on('/dist').length === 2);
    expect(workers.output.join('\n')).not.toContain(secret);
  });
});
