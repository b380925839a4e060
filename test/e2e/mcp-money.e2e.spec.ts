import { randomUUID } from 'node:crypto';
import { Keypair, VersionedTransaction } from '@solana/web3.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestCitizen } from '../support/citizens';
import { CreatorFeesRig } from '../support/creatorFees';
import { call } from '../support/http';
import { callTool, connectMcp, wordsInPlace, type ToolReply } from '../support/mcp';

/** A handed-out transaction, signed by the wallet it names as fee payer, as base64. */
function signed(transaction: string, signer: Keypair): string {
  const tx = VersionedTransaction.deserialize(Buffer.from(transaction, 'base64'));
  tx.sign([signer]);
  return Buffer.from(tx.serialize()).toString('base64');
}

/**
 * The money tools an MCP-only agent lacked, on the bundled chain: its creator fees, their claim, and the submission of
 * a transaction the service handed it (a self-custody buy, an execute=false claim) once signed.
 */
describe('MCP: svc_fees, svc_fees_claim and svc_tx_submit', () => {
  const rig = new CreatorFeesRig();
  const clients: Client[] = [];
  let base: string;
  const tool = (client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolReply> => callTool(base, client, name, args);
  async function mcpFor(who: TestCitizen): Promise<Client> {
    const client = await connectMcp(base, '/mcp', who.key);
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    ({ base } = await rig.start('mcp_money'));
  }, 90_000);
  afterAll(async () => {
    for (const client of clients) await client.close();
    await rig.close();
  });

  it('reads the fees and hands the claim out as HTTP does; the signed claim goes through svc_tx_submit as the fee_claim', async () => {
    const dev = await rig.citizen('mcpdev', 3);
    const mint = await rig.deploy(dev, 'MCPF');
    await rig.buy(rig.trader, mint, 1);
    const mcp = await mcpFor(dev);

    const fees = await tool(mcp, 'svc_fees');
    // Both read the vaults as they stand; the chain may move a slot between the two reads.
    const asRead = (body: Record<string, unknown>) => ({ ...body, slot: expect.any(Number) });
    expect([fees.isError, wordsInPlace(fees.structuredContent)]).toEqual([undefined, asRead((await rig.get(dev, '/api/v1/fees')).body)]);
    expect(fees.structuredContent!.total_sol).toBeGreaterThan(0);

    // Asked again while it is outstanding, a handed-out claim is the same transaction: HTTP's answer is the tool's.
    const handed = await tool(mcp, 'svc_fees_claim', { execute: false });
    expect(handed.structuredContent).toMatchObject({ ok: true, executed: false, transaction: expect.any(String), fee_payer: dev.wallet });
    expect(wordsInPlace(handed.structuredContent)).toEqual((await rig.post(dev, '/api/v1/fees/claim', { execute: false })).body);

    const key = randomUUID();
    const transaction = signed(handed.structuredContent!.transaction, dev.keypair!);
    const submitted = await tool(mcp, 'svc_tx_submit', { transaction, idempotency_key: key });
    expect(submitted.structuredContent).toMatchObject({ ok: true, executed: true, action: 'fee_claim', signature: expect.any(String) });
    const replay = await call(base, 'POST', '/api/v1/tx/submit', { key: dev.key, body: { transaction }, headers: { 'Idempotency-Key': key } });
    expect([replay.headers.get('idempotent-replayed'), replay.body]).toEqual(['true', wordsInPlace(submitted.structuredContent)]);
    expect((await rig.actions('fee_claim')).map((e) => e.data.signature)).toContain(submitted.structuredContent!.signature);
    const after = await tool(mcp, 'svc_fees');
    expect(wordsInPlace(after.structuredContent)).toEqual(asRead((await rig.get(dev, '/api/v1/fees')).body));
  });

  it('signs and submits the buy a self-custody citizen is handed: simulated as HTTP simulates it, then recorded as the buy', async () => {
    const seller = await rig.citizen('mcpcoin', 2);
    const mint = await rig.deploy(seller, 'MCPS');
    const own = Keypair.generate();
    const self = await rig.citizen('mcpself', 2, { custody: 'self', public_key: own.publicKey.toBase58() }, own);
    const mcp = await mcpFor(self);

    const handed = await tool(mcp, 'svc_buy', { mint, amount_sol: 0.05 });
    expect(handed.structuredContent).toMatchObject({ ok: true, executed: false, transaction: expect.any(String), fee_payer: self.wallet });
    const transaction = signed(handed.structuredContent!.transaction, own);

    const simulated = await tool(mcp, 'svc_tx_submit', { transaction, simulate_only: true });
    expect(simulated.structuredContent).toMatchObject({ ok: true, simulated: true, err: null });
    // Two simulations a second apart differ in the events' timestamps (the program's `Program data:` lines) only.
    const eventsAside = (body: unknown) => JSON.parse(JSON.stringify(body).replace(/"Program data: [^"]*"/g, '"Program data: (event)"'));
    expect(eventsAside(wordsInPlace(simulated.structuredContent))).toEqual(eventsAside((await rig.post(self, '/api/v1/tx/submit', { transaction, simulate_only: true })).body));

    const submitted = await tool(mcp, 'svc_tx_submit', { transaction });
    expect(submitted.structuredContent).toMatchObject({ ok: true, executed: true, action: 'buy', signature: expect.any(String) });
    const activity = (await call(base, 'GET', '/api/v1/activity?limit=10')).body.actions as Array<{ signature: string; action: string }>;
    expect(activity.find((a) => a.signature === submitted.structuredContent!.signature)).toMatchObject({ action: 'buy' });
    const wallet = await rig.get(self, '/api/v1/wallet');
    expect(wallet.body.holdings).toEqual(expect.arrayContaining([expect.objectContaining({ mint })]));
  });
});
