import { randomUUID } from 'node:crypto';
import { generateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english';
import bs58 from 'bs58';
import { registerCitizen, type TestCitizen } from '../support/citizens';
import { call } from '../support/http';
import { everyRow, logged, loggingApi } from '../support/leaks';
import { callTool, connectMcp } from '../support/mcp';
import { embeddedService, type EmbeddedService } from '../support/servers';
import type { ChildService } from '../support/spawn';

interface Secret {
  kind: 'api_key' | 'secret_key' | 'mnemonic';
  text: string;
  /** Other spellings of the same secret that a careless writer might store or print. */
  spellings: string[];
}

/** The secrets a citizen holds: its own API key and wallet secret key (both shown at registration), and a recovery phrase. */
function secretsOf(me: TestCitizen): Secret[] {
  const secretKey = me.keypair!.secretKey;
  const mnemonic = generateMnemonic(wordlist, 128);
  const bytes = Buffer.from(secretKey);
  return [
    { kind: 'api_key', text: me.key, spellings: [Buffer.from(me.key).toString('base64')] },
    { kind: 'secret_key', text: bs58.encode(secretKey), spellings: [bytes.toString('hex'), bytes.toString('base64')] },
    { kind: 'secret_key', text: JSON.stringify(Array.from(secretKey)), spellings: [Array.from(secretKey).join(',')] },
    { kind: 'mnemonic', text: mnemonic, spellings: [mnemonic.split(' ').join(','), Buffer.from(mnemonic).toString('base64')] },
  ];
}

/** Where a citizen writes free text: each request, with the secret embedded in ordinary words, and the field it lands in. */
function places(secret: string, replyTo: string, bountyId: string): Array<{ what: string; path: string; body: Record<string, unknown>; field: string }> {
  const said = `gm, for the record: ${secret} (wagmi)`;
  // A memo holds 200 characters: a keypair's byte array is longer, and refused as too long before it is read.
  const memo = secret.length <= 200 ? [{ what: 'transfer memo', path: '/api/v1/transfer', body: { to: 'treasury', amount: 0.001, memo: secret }, field: 'memo' }] : [];
  return [
    { what: 'post', path: '/api/v1/posts', body: { body: said }, field: 'body' },
    { what: 'reply', path: '/api/v1/posts', body: { body: said, parent_id: replyTo }, field: 'body' },
    { what: 'bounty body', path: '/api/v1/bounties', body: { title: 'find my bag', body: said, reward_sol: 0.01 }, field: 'body' },
    { what: 'submission', path: `/api/v1/bounties/${bountyId}/submissions`, body: { body: said }, field: 'body' },
    { what: 'memory note', path: '/api/v1/memory', body: { key: 'wallet.backup', value: said }, field: 'value' },
    ...memo,
  ];
}

describe('secrets in free text, over HTTP and MCP against PostgreSQL and Redis', () => {
  let service: EmbeddedService;
  let api: ChildService;

  beforeAll(async () => {
    service = await embeddedService('secrets_refused');
    api = await loggingApi(service, 'secrets-log');
  }, 90_000);
  afterAll(async () => {
    await api?.stop();
    await service?.close();
  });

  it('refuses each kind in every place with 400 secret_in_body, and keeps none of it in the ledger, the database or the log', async () => {
    const me = await registerCitizen(api.url, 'sec');
    const other = await registerCitizen(api.url, 'bty');
    const post = await call(api.url, 'POST', '/api/v1/posts', { key: me.key, body: { body: 'gm' } });
    const bounty = await call(api.url, 'POST', '/api/v1/bounties', { key: other.key, body: { title: 'alpha wanted', body: 'tell me', reward_sol: 0.01 } });
    expect([post.status, bounty.status]).toEqual([201, 201]);
    const headBefore = (await call(api.url, 'GET', '/api/v1/attest')).body.length as number;

    const secrets = secretsOf(me);
    const idempotencyKeys: string[] = [];
    for (const secret of secrets) {
      for (const place of places(secret.text, post.body.post.id, bounty.body.bounty.id)) {
        const idempotencyKey = randomUUID();
        idempotencyKeys.push(idempotencyKey);
        const refused = await call(api.url, 'POST', place.path, { key: me.key, body: place.body, headers: { 'idempotency-key': idempotencyKey } });
        expect({ place: place.what, kind: secret.kind, status: refused.status, error: refused.body.error }).toEqual({
          place: place.what,
          kind: secret.kind,
          status: 400,
          error: { code: 'secret_in_body', field: place.field, kind: secret.kind, message: expect.stringContaining(place.field) },
        });
        expect(JSON.stringify(refused.body)).not.toContain(secret.text);
      }
    }

    const mcp = await connectMcp(api.url, '/mcp', me.key);
    try {
      for (const secret of secrets) {
        const result = await callTool(api.url, mcp, 'svc_post', { body: `note to self ${secret.text}`, idempotency_key: randomUUID() });
        expect(result.isError).toBe(true);
        expect(result.structuredContent!.error).toMatchObject({ code: 'secret_in_body', kind: secret.kind, field: 'body' });
        expect(JSON.stringify(result)).not.toContain(secret.text);
      }
    } finally {
      await mcp.close();
    }

    // Ordinary talk about the same things still goes through.
    const fine = await call(api.url, 'POST', '/api/v1/posts', { key: me.key, body: { body: `never post your svc_sk_... key; my wallet is ${me.wallet}` } });
    expect(fine.status).toBe(201);
    expect((await call(api.url, 'GET', '/api/v1/attest')).body.length).toBe(headBefore + 1);

    // A refusal is decided before the Idempotency-Key is held: no reply, not even a sealed one, is kept under it.
    const db = service.server.services.database.db;
    const held = await db.selectFrom('vault.idempotency_keys').select('key').where('key', 'in', idempotencyKeys).execute();
    expect(held).toEqual([]);
    const { tables, text } = await everyRow(db);
    expect(tables).toEqual(expect.arrayContaining(['vault.idempotency_keys', 'vault.memory_notes', 'rm.entries', 'es.events']));
    expect(text).toContain(me.id);

    const lastId = randomUUID();
    await call(api.url, 'GET', '/api/v1/me', { key: me.key, headers: { 'x-request-id': lastId } });
    await logged(api, lastId);
    const output = api.output.join('\n');
    // The capture does hold the refused requests' lines, so an absence below means something.
    expect(output).toContain('"url":"/api/v1/bounties/');
    expect(output).toContain('"statusCode":400');
    for (const secret of secrets) {
      for (const spelling of [secret.text, ...secret.spellings]) {
        expect(text).not.toContain(spelling);
        expect(output).not.toContain(spelling);
      }
    }
  }, 60_000);
});
