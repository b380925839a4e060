import { randomBytes } from 'node:crypto';
import { LAMPORTS_PER_SOL, PublicKey, SystemProgram, type Connection } from '@solana/web3.js';
import { ActionPipeline, type ActionRequest } from '@svc/actions';
import { Liveness, openDatabase } from '@svc/readmodel';
import { ChainOutbox } from '@svc/vault';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { freshDatabase, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { PrivateRedis, TcpProxy } from '../support/faults';
import { call, type Reply } from '../support/http';
import { ledgerEntries } from '../support/ledger';
import { until } from '../support/until';

const CLIENTS = 6;
const OUTAGE_MS = 4_000;
const SETTLE_MS = 60_000;

interface Transfer {
  from: TestCitizen;
  to: TestCitizen;
  lamports: bigint;
  key: string;
  /** Every answer it got, the last one final. */
  replies: Reply[];
  finalAt?: number;
}

interface AuditFigures {
  requests: number;
  acknowledged: number;
  answered_otherwise: number;
  retried: number;
  /** Acknowledged, but not on the ledger once and on the chain once. */
  lost: number;
  /** Amounts moved more than once on the chain (every request's amount is unique). */
  duplicated: number;
  recorded_twice: number;
  /** Confirmed spends of the citizens that the ledger does not hold. */
  unrecorded_spends: number;
}

/**
 * Transfers under Idempotency-Keys while PostgreSQL goes away (its connections cut and refused, as a stopped
 * server does) and then Redis is killed: clients retry what did not get a final answer, as clients do. Every
 * acknowledged transfer is on the ledger once and on the chain once, no amount moves twice, no confirmed
 * spend is left unrecorded, and every request has its final answer soon after the outage ends.
 */
describe('the money path through a PostgreSQL outage and a Redis kill', () => {
  let db: FreshDatabase;
  let proxy: TcpProxy;
  let redis: PrivateRedis;
  let server: RunningServer;
  let base: string;
  let connection: Connection;
  let citizens: TestCitizen[];
  let nextLamports = 1_000_000n;

  beforeAll(async () => {
    db = await freshDatabase('money_outage');
    proxy = await TcpProxy.to(db.url);
    redis = await PrivateRedis.start();
    server = await startEmbedded(
      testConfig({ DATABASE_URL: proxy.via(db.url), REDIS_URL: redis.url, DATA_DIR: tempDir('money-outage'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
      { outboxRecoveryEveryMs: 1_000 },
    );
    base = server.url;
    connection = server.services.chain.connection;
    citizens = await Promise.all(Array.from({ length: CLIENTS }, () => registerCitizen(base, 'mo')));
    for (const citizen of citizens) await airdrop(connection, citizen.wallet, 20);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await redis?.kill();
    await proxy?.stop();
    await db?.drop();
  });

  /** One transfer to its final answer: a retry after a broken connection, a 503 or a 409 in progress, under its key. */
  async function transferUntilFinal(t: Transfer, stopAt: () => number): Promise<void> {
    for (;;) {
      let reply: Reply | undefined;
      try {
        reply = await call(base, 'POST', '/api/v1/transfer', {
          key: t.from.key,
          body: { to: t.to.id, amount: Number(t.lamports) / LAMPORTS_PER_SOL },
          headers: { 'idempotency-key': t.key },
        });
      } catch {
        reply = undefined;
      }
      if (reply) t.replies.push(reply);
      if (reply && reply.status !== 503 && reply.status !== 409) {
        t.finalAt = Date.now();
        return;
      }
      if (Date.now() > stopAt()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function run(outage: { name: string; begin(): Promise<void>; end(): Promise<void> }): Promise<{ transfers: Transfer[]; recoveredMs: number }> {
    const transfers: Transfer[] = [];
    let outageEndedAt: number | undefined;
    let stopping = false;
    const client = async (i: number) => {
      while (!stopping) {
        const from = citizens[i]!;
        const to = citizens[(i + 1 + Math.floor(Math.random() * (CLIENTS - 1))) % CLIENTS]!;
        const t: Transfer = { from, to, lamports: nextLamports++, key: `${outage.name}-${randomBytes(6).toString('hex')}`, replies: [] };
        transfers.push(t);
        await transferUntilFinal(t, () => (outageEndedAt ?? Infinity) + SETTLE_MS);
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, i) => client(i));
    await until('transfers before the outage', 20_000, () => (transfers.filter((t) => t.finalAt).length >= 12 ? true : undefined));
    await outage.begin();
    const began = Date.now();
    await until('the outage to be felt', 20_000, () => (transfers.some((t) => t.replies.some((r) => r.status === 503)) || Date.now() - began > OUTAGE_MS ? true : undefined));
    await until('the outage to last', OUTAGE_MS + 1_000, () => (Date.now() - began >= OUTAGE_MS ? true : undefined));
    await outage.end();
    outageEndedAt = Date.now();
    // A steady run of final answers after it: the service is back.
    await until('transfers after the outage', SETTLE_MS, () => (transfers.filter((t) => (t.finalAt ?? 0) > outageEndedAt!).length >= 12 ? true : undefined));
    stopping = true;
    await Promise.all(clients);
    const openRows = () =>
      server.services.database.db.selectFrom('vault.chain_outbox').selectAll().where('state', 'in', ['reserved', 'unsigned', 'sent']).execute();
    const settledAt = await until('every request answered and the outbox settled', SETTLE_MS, async () => {
      const open = await openRows();
      return open.length === 0 && transfers.every((t) => t.finalAt) ? Date.now() : undefined;
    }).catch(async (error: Error) => {
      // Which requests were left and where their rows stand say which path hung.
      const unanswered = transfers.filter((t) => !t.finalAt).map((t) => ({ key: t.key, replies: t.replies.length, last: t.replies.at(-1)?.body }));
      const rows = await server.services.database.db
        .selectFrom('vault.chain_outbox')
        .select(['id', 'state', 'holder', 'lease_until', 'idempotency_key', 'updated_at'])
        .where((eb) => eb.or([eb('state', 'in', ['reserved', 'unsigned', 'sent']), ...unanswered.map((u) => eb('idempotency_key', 'like', `${u.key}:%`))]))
        .execute()
        .catch((e: unknown) => String(e));
      throw new Error(`${error.message}\nunanswered: ${JSON.stringify(unanswered)}\ntheir rows and the open ones: ${JSON.stringify(rows)}`);
    });
    const interrupted = transfers.filter((t) => t.replies.length !== 1 || t.replies[0]!.status !== 200);
    const recoveredMs = Math.max(0, settledAt - outageEndedAt, ...interrupted.map((t) => (t.finalAt ?? Infinity) - outageEndedAt!));
    return { transfers, recoveredMs };
  }

  /** What the ledger and the chain say of these transfers: each acknowledged one once, nothing twice, nothing unrecorded. */
  async function audit(transfers: Transfer[]): Promise<AuditFigures> {
    const recorded = new Map<string, number>();
    for (const entry of (await ledgerEntries(base)).filter((e) => e.type === 'ActionRecorded')) {
      const signature = entry.data.signature as string;
      recorded.set(signature, (recorded.get(signature) ?? 0) + 1);
    }
    const moved = new Map<bigint, string[]>();
    const unrecorded: string[] = [];
    for (const citizen of citizens) {
      for (const { signature, err } of await connection.getSignaturesForAddress(new PublicKey(citizen.wallet), { limit: 1000 }, 'confirmed')) {
        if (err) continue;
        const tx = await connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
        const keys = tx!.transaction.message.staticAccountKeys;
        if (keys[0]!.toBase58() !== citizen.wallet) continue;
        if (!recorded.has(signature)) unrecorded.push(signature);
        for (const ix of tx!.transaction.message.compiledInstructions) {
          const data = Buffer.from(ix.data);
          if (keys[ix.programIdIndex]!.equals(SystemProgram.programId) && data.length === 12 && data.readUInt32LE(0) === 2) {
            const lamports = data.readBigUInt64LE(4);
            moved.set(lamports, [...(moved.get(lamports) ?? []), signature]);
          }
        }
      }
    }
    const ours = new Set(transfers.map((t) => t.lamports));
    const acknowledged = transfers.filter((t) => t.replies.at(-1)?.status === 200);
    const lost = acknowledged.filter((t) => recorded.get(t.replies.at(-1)!.body.signature) !== 1 || moved.get(t.lamports)?.length !== 1);
    return {
      requests: transfers.length,
      acknowledged: acknowledged.length,
      answered_otherwise: transfers.length - acknowledged.length,
      retried: transfers.filter((t) => t.replies.length > 1 || t.replies.length === 0).length,
      lost: lost.length,
      duplicated: [...moved].filter(([lamports, signatures]) => ours.has(lamports) && signatures.length > 1).length,
      recorded_twice: [...recorded.values()].filter((n) => n > 1).length,
      unrecorded_spends: unrecorded.length,
    };
  }

  it('gives back a row it reserved when the database went away before signing, as soon as the database is back', async () => {
    // A pipeline of its own whose outbox goes through a second proxy while its liveness lock stays up: the row it
    // reserves names a live process and a two-minute lease, so no retry or recovery pass may take it over, and
    // only the release it owes frees it this soon.
    const cutProxy = await TcpProxy.to(db.url);
    const cut = await openDatabase({ url: cutProxy.via(db.url), dataDir: tempDir('money-outage-cut'), poolSize: 2 });
    const liveness = await Liveness.start(server.services.database);
    const { services } = server;
    const pipeline = new ActionPipeline({
      chain: () => services.chain,
      outbox: await new ChainOutbox(cut, 'vault', liveness).init(),
      writer: services.writer,
      store: services.store,
      walletSecret: (agentId) => services.vault.walletSecret(agentId),
      clock: Date.now,
      log: services.log,
    });
    try {
      const [from, to] = [citizens[0]!, citizens[1]!];
      const request: ActionRequest = {
        action: 'transfer',
        agentId: from.id,
        wallet: from.wallet,
        sign: true,
        idempotencyKey: `release-${randomBytes(6).toString('hex')}`,
        record: { type: 'RecordAction', agentId: from.id, data: { action: 'transfer', wallet: from.wallet, details: {} } },
        summary: {},
        build: { kind: 'instructions', transaction: { instructions: [SystemProgram.transfer({ fromPubkey: new PublicKey(from.wallet), toPubkey: new PublicKey(to.wallet), lamports: nextLamports++ })] } },
      };
      const reserved = await pipeline.reserve(request);
      if (reserved.kind !== 'reserved') throw new Error(`expected a reserved row, got ${reserved.kind}`);
      await cutProxy.stop();
      // Signing stores the signed row first: the attempt fails, and its release cannot reach the database either.
      await expect(pipeline.perform(reserved)).rejects.toThrow();
      await cutProxy.start();
      const again = await until('a retry under the key to get its row again', 10_000, () => pipeline.reserve(request).catch(() => undefined));
      expect(again.kind).toBe('reserved');
      if (again.kind === 'reserved') await pipeline.release(again);
    } finally {
      pipeline.close();
      await liveness.stop();
      await cut.close();
      await cutProxy.stop();
    }
  }, 60_000);

  const outages: Array<[string, () => { name: string; begin(): Promise<void>; end(): Promise<void> }]> = [
    ['PostgreSQL stopped', () => ({ name: 'pg', begin: () => proxy.stop(), end: () => proxy.start() })],
    ['Redis killed', () => ({ name: 'redis', begin: () => redis.kill(), end: () => redis.restart() })],
  ];

  it.each(outages)('loses nothing, pays nothing twice and answers every request soon after: %s', async (what, outage) => {
    const { transfers, recoveredMs } = await run(outage());
    const figures = { ...(await audit(transfers)), recovered_ms: recoveredMs };
    console.log(`money path, ${what} ${OUTAGE_MS} ms: ${JSON.stringify(figures)}`);
    expect(figures).toMatchObject({ lost: 0, duplicated: 0, recorded_twice: 0, unrecorded_spends: 0, answered_otherwise: 0 });
    expect(figures.acknowledged).toBeGreaterThan(24);
    expect(recoveredMs).toBeLessThan(15_000);
  }, 180_000);
});
