import { execFile } from 'node:child_process';
import { Keypair, SystemProgram, Transaction, sendAndConfirmTransaction, type Connection } from '@solana/web3.js';
import { keypairFromSecret, MEMO_PROGRAM_ID } from '@svc/chain';
import type { AnchorView } from '@svc/projections';
import { TREASURY_WALLET } from '@svc/runtime';
import { anchorMemo } from '../../apps/workers/src/anchors';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { call } from '../support/http';
import { embeddedService, type EmbeddedService } from '../support/servers';
import { until } from '../support/until';

const EVERY = 8;

type Anchor = AnchorView & { explorer: string };

/**
 * The workers anchor the ledger head on Solana every ANCHOR_EVERY_ENTRIES entries: one Memo the treasury signs,
 * recorded once as the action `anchor`, listed by /anchors, named by /attest and by each entry of a citizen's record.
 * An unfunded treasury delays anchoring, says so once and in /readyz, and stops nothing else.
 */
describe('ledger anchors on Solana', () => {
  let service: EmbeddedService;
  let base: string;
  let connection: Connection;
  let alice: TestCitizen;

  const anchors = async (query = ''): Promise<{ anchors: Anchor[]; next_before: number | null }> => {
    const reply = await call(base, 'GET', `/api/v1/anchors${query}`);
    expect(reply.status).toBe(200);
    return reply.body;
  };
  const entryAt = async (seq: number) => (await call(base, 'GET', `/api/v1/changes?after=${seq - 1}&limit=1`)).body.changes[0];
  const post = (body: string) => call(base, 'POST', '/api/v1/posts', { key: alice.key, body: { body } });

  beforeAll(async () => {
    // The runner is driven by runOnce() here: its own schedule is an hour apart, so every anchor below is one a test asked for.
    service = await embeddedService('anchors', { ANCHOR_EVERY_ENTRIES: String(EVERY), ANCHOR_INTERVAL_MS: '0' }, { anchors: { everyMs: 3_600_000 } });
    base = service.server.url;
    connection = service.server.services.chain.connection;
    alice = await registerCitizen(base, 'anchored');
  }, 90_000);
  afterAll(() => service?.close());

  it(`commits the head once ${EVERY} entries follow the last anchor, and not before`, async () => {
    const runner = service.server.workers.anchors;
    for (let i = 0; i < EVERY; i++) expect((await post(`before ${i}`)).status).toBe(201);
    // The runner's first pass, at start, may still hold the lease: then this one waits its turn.
    const first = await until('a pass that anchors', 10_000, async () => {
      const outcome = await runner.runOnce();
      if (!outcome.anchored && outcome.reason !== 'another process anchors') throw new Error(outcome.reason);
      return outcome.anchored ? outcome : undefined;
    });
    expect(await runner.runOnce()).toEqual({ anchored: false, reason: 'no anchor is due' });
    for (let i = 0; i < EVERY - 1; i++) expect((await post(`entry ${i}`)).status).toBe(201);
    // The anchor's own record is one of the entries that follow it: EVERY - 1 posts are not enough yet.
    expect(await runner.runOnce()).toEqual({ anchored: false, reason: 'no anchor is due' });
    expect((await post('one more')).status).toBe(201);
    const second = await runner.runOnce();
    if (!second.anchored) throw new Error(second.reason);

    const listed = await until('both anchors listed', 10_000, async () => {
      const page = await anchors();
      return page.anchors[0]?.signature === second.signature ? page.anchors.slice(0, 2) : undefined;
    });
    const [latest, earlier] = listed as [Anchor, Anchor];
    expect([latest.seq, earlier.seq, earlier.signature]).toEqual([second.seq, first.seq, first.signature]);
    expect(latest.ledger_seq - earlier.ledger_seq).toBe(EVERY + 1);
    for (const anchor of listed) {
      // The memo commits to the entry the ledger serves at that seq, and the anchor is itself on the ledger under @treasury.
      expect(anchor.hash).toBe((await entryAt(anchor.seq)).hash);
      const own = await entryAt(anchor.ledger_seq);
      expect(own).toMatchObject({ type: 'ActionRecorded', data: { action: 'anchor', signature: anchor.signature, details: { seq: anchor.seq, hash: anchor.hash, memo: anchorMemo(anchor.seq, anchor.hash) } } });
      expect(anchor.explorer).toContain(anchor.signature);

      const tx = await connection.getTransaction(anchor.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
      expect(tx?.meta?.err).toBeNull();
      expect(tx!.slot).toBe(anchor.slot);
      const keys = tx!.transaction.message.getAccountKeys();
      const memo = tx!.transaction.message.compiledInstructions.find((ix) => keys.get(ix.programIdIndex)!.equals(MEMO_PROGRAM_ID));
      expect(Buffer.from(memo!.data).toString('utf8')).toBe(`svc-ledger:v1:${anchor.seq}:${anchor.hash}`);
      // The treasury signed and paid it, alone: 5,000 lamports, one signature's fee.
      expect([tx!.transaction.signatures.length, keys.get(0)!.toBase58(), own.actor]).toEqual([1, own.data.wallet, own.actor]);
      expect([tx!.meta!.fee, own.data.details.observed.fee_lamports]).toEqual([5000, 5000]);
    }
    // Paging: one at a time, newest first, then nothing.
    const one = await anchors('?limit=1');
    expect([one.anchors.map((a) => a.seq), one.next_before]).toEqual([[latest.seq], latest.seq]);
    expect((await anchors(`?limit=1&before=${one.next_before}`)).anchors.map((a) => a.seq)).toEqual([earlier.seq]);
    expect((await anchors(`?before=${earlier.seq}`)).anchors.every((a) => a.seq < earlier.seq)).toBe(true);
    expect((await call(base, 'GET', '/api/v1/anchors?limit=0')).status).toBe(400);
  });

  it('/attest names the latest anchor and how many entries follow it; the record names each entry’s covering anchor', async () => {
    const { anchors: [latest] } = await anchors();
    expect((await post('after the last anchor')).status).toBe(201);
    const attest = await until('attest past the new post', 10_000, async () => {
      const body = (await call(base, 'GET', '/api/v1/attest')).body;
      return body.anchor?.seq === latest!.seq && body.unanchored >= 2 ? body : undefined;
    });
    expect(attest.unanchored).toBe(attest.length - 1 - latest!.seq);
    expect(attest.anchor).toEqual(latest);
    // The board's ledger page shows it, linked to its transaction.
    const page = await (await fetch(`${base}/ledger`)).text();
    expect(page).toContain(`Anchored on Solana at seq ${latest!.seq}`);
    expect(page).toContain(`href="${latest!.explorer.replaceAll('&', '&amp;')}"`);

    const record = (await call(base, 'GET', `/api/v1/record/${alice.handle}?limit=100`)).body;
    const events = record.events as Array<{ seq: number; anchor: Anchor | null }>;
    expect(events.length).toBeGreaterThan(EVERY);
    for (const event of events) {
      if (event.seq > latest!.seq) expect(event.anchor).toBeNull();
      else expect(event.anchor!.seq).toBeGreaterThanOrEqual(event.seq);
    }
    // Each is the FIRST anchor at or after its entry.
    const list = (await anchors()).anchors;
    for (const event of events.filter((e) => e.anchor)) expect(event.anchor).toEqual([...list].reverse().find((a) => a.seq >= event.seq));
  });

  it("the guide's check of one entry against Solana runs as written, with nothing but the public entries and the RPC", async () => {
    const guide = (await call(base, 'GET', '/skill/ledger.md')).body as string;
    const sample = [...guide.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!).find((code) => code.includes('svc-ledger:v1:'));
    expect(sample).toBeDefined();
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, ['--input-type=module', '-e', sample!, alice.handle, connection.rpcEndpoint], { timeout: 30_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
      ),
    );
    expect(run).toMatchObject({ code: 0, stdout: expect.stringMatching(/^entry \d+ is in the history Solana holds since slot \d+\n$/) });
  });

  it('an unfunded treasury delays anchoring, once in the log and in /readyz, and the next pass once it is funded anchors', async () => {
    const { services } = service.server;
    const treasury = keypairFromSecret((await services.serviceWallets.wallet(TREASURY_WALLET)).secretKey);
    const sink = Keypair.generate().publicKey;
    const balance = await connection.getBalance(treasury.publicKey, 'confirmed');
    // Everything but the fee of this transfer goes; the treasury then holds nothing.
    await sendAndConfirmTransaction(connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: treasury.publicKey, toPubkey: sink, lamports: balance - 5000 })), [treasury], { commitment: 'confirmed' });
    expect(await connection.getBalance(treasury.publicKey, 'confirmed')).toBe(0);
    for (let i = 0; i < EVERY; i++) expect((await post(`unfunded ${i}`)).status).toBe(201);

    const runner = service.server.workers.anchors;
    const log = services.log as unknown as { warn: (...args: unknown[]) => void };
    const original = log.warn;
    const warn = original.bind(log);
    const delays: unknown[] = [];
    log.warn = (...args: unknown[]) => {
      if (args[1] === 'ledger anchoring delayed: the treasury is unfunded') delays.push(args[0]);
      warn(...args);
    };
    try {
      expect(await runner.runOnce()).toEqual({ anchored: false, reason: 'the treasury cannot pay the fee' });
      expect(await runner.runOnce()).toEqual({ anchored: false, reason: 'the treasury cannot pay the fee' });
    } finally {
      log.warn = original;
    }
    // Said once, however many passes find it so.
    expect(delays).toEqual([{ treasury: treasury.publicKey.toBase58(), balance_lamports: 0 }]);
    const readyz = (await call(base, 'GET', '/readyz')).body;
    expect(readyz).toMatchObject({ status: 'ready', anchors: 'delayed', anchors_reason: expect.stringContaining(treasury.publicKey.toBase58()) });
    // Nothing else stops: a citizen still posts and trades on.
    expect((await post('still posting')).status).toBe(201);

    await airdrop(connection, treasury.publicKey.toBase58(), 1);
    expect(await runner.runOnce()).toMatchObject({ anchored: true });
    expect((await call(base, 'GET', '/readyz')).body).toMatchObject({ anchors: 'ok' });
    expect((await call(base, 'GET', '/readyz')).body.anchors_reason).toBeUndefined();
  });
});
