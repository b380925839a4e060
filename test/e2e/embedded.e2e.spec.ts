import fs from 'node:fs';
import path from 'node:path';
import { Connection, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { startChild, type ChildService } from '../support/spawn';
import { closeConnection } from '../support/localnet';
import { tempDir } from '../support/env';
import { call, uniqueHandle } from '../support/http';

/**
 * `npm start` on a fresh clone: no DATABASE_URL, EVENTSTORE_URL or REDIS_URL — PGlite under DATA_DIR,
 * the event store on it and the in-process bus; the API, the projector, the workers and the bundled chain
 * in one process.
 */
describe('the embedded single-process start', () => {
  // A directory the start must create itself, as on a fresh clone.
  const dataDir = path.join(tempDir('embedded'), 'data');
  const env = { DATA_DIR: dataDir, PORT: '0', LOCALNET_PORT: '0', HOST: '127.0.0.1', DATABASE_URL: '', EVENTSTORE_URL: '', REDIS_URL: '', SERVICE_MASTER_KEY: '' };
  let service: ChildService;

  afterEach(async () => {
    await service?.stop();
  });

  it('runs on embedded defaults, keeps its ledger across a restart, and never logs a secret', async () => {
    service = await startChild('scripts/start.ts', [], env);
    const handles = [uniqueHandle('emb'), uniqueHandle('emb')];
    const secrets: string[] = [];
    for (const handle of handles) {
      const res = await call(service.url, 'POST', '/api/v1/register', { body: { handle, model: 'm' } });
      expect(res.status).toBe(201);
      secrets.push(res.body.api_key, res.body.wallet.secret_key);
    }
    // Note names and doorbell URLs are private too, and they travel in query strings.
    const noteName = `plan.${uniqueHandle('note').toLowerCase()}`;
    const hookToken = `TOKEN${uniqueHandle('hook')}`;
    expect((await call(service.url, 'POST', '/api/v1/memory', { key: secrets[0], body: { key: noteName, value: 'v' } })).status).toBeLessThan(300);
    expect((await call(service.url, 'GET', `/api/v1/memory?key=${noteName}`, { key: secrets[0] })).status).toBe(200);
    await call(service.url, 'DELETE', `/api/v1/doorbell?url=${encodeURIComponent(`https://hooks.example.com/services/${hookToken}`)}`, { key: secrets[0] });
    secrets.push(noteName, hookToken);
    const listed = await call(service.url, 'GET', '/api/v1/agents');
    // @treasury is the first citizen of every ledger: the service registers it at first start.
    expect(listed.body.agents.map((a: { handle: string }) => a.handle)).toEqual([...handles].reverse().concat('treasury'));
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);
    expect(service.output.join('\n')).toMatch(/SERVICE_MASTER_KEY is unset/);
    await service.stop();
    const firstOutput = service.output.join('\n');

    service = await startChild('scripts/start.ts', [], env);
    const again = await call(service.url, 'POST', '/api/v1/register', { body: { handle: handles[0]!.toUpperCase(), model: 'm' } });
    expect(again.status).toBe(409);
    const me = await call(service.url, 'GET', '/api/v1/me', { key: secrets[0] });
    expect(me.body.agent.handle).toBe(handles[0]);
    const third = await call(service.url, 'POST', '/api/v1/register', { body: { handle: uniqueHandle('emb'), model: 'm' } });
    // After @treasury and the service token it deployed at first boot (once: the restart deployed nothing).
    expect(third.body.ledger.seq).toBe(4);
    const attest = await call(service.url, 'GET', '/api/v1/attest');
    expect(attest.body).toMatchObject({ ok: true, length: 5, verified: { ok: true, checked: 5 } });

    const logs = firstOutput + service.output.join('\n');
    for (const secret of secrets) expect(logs).not.toContain(secret);

    // A second process on the same files would fork the ledger: `npm start` and the API alone both refuse to start.
    await expect(startChild('scripts/start.ts', [], env)).rejects.toThrow(/in use by process \d+/);
    await expect(startChild('apps/api/src/main.ts', [], env)).rejects.toThrow(/in use by process \d+/);

    // A master key others can read is refused, with the way to mend it.
    await service.stop();
    const keyFile = path.join(dataDir, 'master.key');
    fs.chmodSync(keyFile, 0o644);
    await expect(startChild('scripts/start.ts', [], env)).rejects.toThrow(/master\.key is open to other users \(mode 0644\); run `chmod 600 [^`]*master\.key`/);
    fs.chmodSync(keyFile, 0o600);
  }, 120_000);

  it('runs the bundled chain in-process, and a citizen\'s balance survives a restart', async () => {
    const chainDir = tempDir('embedded-chain');
    const chainEnv = { ...env, DATA_DIR: chainDir };
    service = await startChild('scripts/start.ts', [], chainEnv);
    const registered = await call(service.url, 'POST', '/api/v1/register', { body: { handle: uniqueHandle('chain'), model: 'm' } });
    const wallet = new PublicKey(registered.body.wallet.public_key);
    let connection = new Connection(solanaRpc(service), 'confirmed');
    expect(await connection.getVersion()).toHaveProperty('solana-core');
    const signature = await connection.requestAirdrop(wallet, 3 * LAMPORTS_PER_SOL);
    expect((await connection.getSignatureStatuses([signature])).value[0]?.err).toBeNull();
    await closeConnection(connection);
    await service.stop();

    service = await startChild('scripts/start.ts', [], chainEnv);
    connection = new Connection(solanaRpc(service), 'confirmed');
    expect(await connection.getBalance(wallet)).toBe(3 * LAMPORTS_PER_SOL);
    await closeConnection(connection);
  }, 120_000);
});

function solanaRpc(service: ChildService): string {
  const line = service.output.find((l) => l.includes('"msg":"service listening"'))!;
  return JSON.parse(line).solana_rpc as string;
}
