import { randomBytes } from 'node:crypto';
import { LAMPORTS_PER_SOL, SystemProgram, type Connection, type VersionedTransactionResponse } from '@solana/web3.js';
import type { LedgerEntry } from '@svc/ledger';
import type pg from 'pg';
import { airdrop, registerCitizen, spendsOf } from '../support/citizens';
import { CrashRig } from '../support/crash';
import { call, type Reply } from '../support/http';
import { ledgerEntries } from '../support/ledger';
import type { ChildService } from '../support/spawn';
import { until } from '../support/until';

/**
 * The API killed with SIGKILL, 10 times at random points, while transfers are in flight; after each
 * restart more load; after the last one, every confirmed transaction is on the ledger exactly once.
 *
 * The chain runs in a process of its own (`npm run localnet`) and only the API dies: a real chain does
 * not crash with the service, and a transaction sent just before the kill goes on to confirm while
 * nobody is there to record it — exactly what recovery must settle.
 *
 * CRASH_SEED=<n> replays the same kill points and request mix.
 */
const KILLS = 10;
const CITIZENS = 6;
const IN_FLIGHT = 12;
const FINAL_TRANSFERS = 30;
const SEED = Number(process.env.CRASH_SEED ?? randomBytes(4).readUInt32LE(0));
const SETTLE_MS = 60_000;

interface Citizen {
  id: string;
  key: string;
  wallet: string;
}

interface Sent {
  from: Citizen;
  body: { to: string; amount: number; memo?: string };
  lamports: bigint;
  idempotencyKey?: string;
  reply?: Reply;
  /** The connection broke: the process died with this request inside it. */
  lost?: boolean;
}

/** mulberry32: small, seedable, good enough to pick kill points. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('SIGKILL between send and record, under load', () => {
  const random = prng(SEED);
  let rig: CrashRig;
  let sql: pg.Client;
  let api: ChildService | undefined;
  let connection: Connection;
  const sent: Sent[] = [];
  let nextLamports = 100_000n;

  const start = (): Promise<ChildService> => rig.startService({ RATE_LIMIT_RPS: '100000', REGISTER_PER_IP_PER_HOUR: '100000' });

  const unsettledRows = async (): Promise<number> =>
    (await sql.query(`select count(*)::int as n from vault.chain_outbox where state in ('reserved', 'unsigned', 'sent')`)).rows[0].n;

  const signedRows = async (): Promise<number> => (await sql.query(`select count(*)::int as n from vault.chain_outbox where signature is not null`)).rows[0].n;

  beforeAll(async () => {
    console.log(`crash test seed: ${SEED} (CRASH_SEED=${SEED} repeats it)`);
    rig = await CrashRig.start('crash');
    ({ sql, connection } = rig);
    api = await start();
  }, 120_000);

  afterAll(() => rig?.close());

  const register = (): Promise<Citizen> => registerCitizen(api!.url, 'crash');
  const fund = (wallet: string, sol: number) => airdrop(connection, wallet, sol);

  /** A transfer nobody else asks for: its lamports are unique, so the chain shows whether it ever moved twice. */
  function plan(citizens: Citizen[]): Sent {
    const from = citizens[Math.floor(random() * citizens.length)]!;
    const others = citizens.filter((c) => c !== from);
    const to = others[Math.floor(random() * others.length)]!;
    const lamports = nextLamports++;
    const body: Sent['body'] = { to: to.id, amount: Number(lamports) / LAMPORTS_PER_SOL };
    if (random() < 0.4) body.memo = `crash ${lamports}`;
    const idempotencyKey = random() < 0.35 ? `crash-${SEED}-${lamports}` : undefined;
    return { from, body, lamports, idempotencyKey };
  }

  async function send(target: ChildService, request: Sent): Promise<void> {
    sent.push(request);
    try {
      request.reply = await call(target.url, 'POST', '/api/v1/transfer', {
        key: request.from.key,
        body: request.body,
        headers: request.idempotencyKey ? { 'idempotency-key': request.idempotencyKey } : {},
      });
    } catch {
      request.lost = true;
    }
  }

  /** IN_FLIGHT clients, each sending one transfer after another until stopped; the kill cuts off what is in flight. */
  function load(target: ChildService, citizens: Citizen[]): { stop(): void; done: Promise<void> } {
    let stopped = false;
    const client = async () => {
      while (!stopped) await send(target, plan(citizens));
    };
    const done = Promise.all(Array.from({ length: IN_FLIGHT }, client)).then(() => undefined);
    return { stop: () => (stopped = true), done };
  }

  /** The same request again, as its client would after a broken connection: it must never transfer twice. */
  async function retryLost(target: ChildService): Promise<void> {
    const lost = sent.filter((s) => s.lost && s.idempotencyKey && !s.reply);
    await Promise.all(
      lost.map(async (request) => {
        request.reply = await until(`the retry of ${request.idempotencyKey}`, SETTLE_MS, async () => {
          const reply = await call(target.url, 'POST', '/api/v1/transfer', { key: request.from.key, body: request.body, headers: { 'idempotency-key': request.idempotencyKey! } });
          return reply.status === 503 || reply.status === 409 ? undefined : reply;
        }, 100);
      }),
    );
  }

  /**
   * From /readyz answering on the restarted process until every action the killed one left is finished: its
   * clients' retries answered, and nothing of it left unsettled in the outbox. Nobody ends the dead process's
   * leases by hand: the service has to see for itself that their holder is gone.
   */
  async function recoveryAfterRestart(target: ChildService): Promise<number> {
    await until('/readyz', 30_000, async () => ((await call(target.url, 'GET', '/readyz').catch(() => undefined))?.status === 200 ? true : undefined), 20);
    const ready = Date.now();
    await Promise.all([retryLost(target), until('the outbox to settle after the restart', SETTLE_MS, async () => ((await unsettledRows()) === 0 ? true : undefined), 20)]);
    return Date.now() - ready;
  }

  const transactions = new Map<string, VersionedTransactionResponse | null>();
  async function transaction(signature: string): Promise<VersionedTransactionResponse | null> {
    if (!transactions.has(signature)) transactions.set(signature, await connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }));
    return transactions.get(signature)!;
  }

  /** The lamports of the system transfer in a transaction. */
  function lamportsMoved(tx: VersionedTransactionResponse): bigint | undefined {
    const keys = tx.transaction.message.staticAccountKeys;
    for (const ix of tx.transaction.message.compiledInstructions) {
      const data = Buffer.from(ix.data);
      if (keys[ix.programIdIndex]!.equals(SystemProgram.programId) && data.length === 12 && data.readUInt32LE(0) === 2) return data.readBigUInt64LE(4);
    }
    return undefined;
  }

  it('records every confirmed transaction exactly once after 10 kills and restarts', async () => {
    const began = Date.now();
    const citizens: Citizen[] = [];
    for (let i = 0; i < CITIZENS; i++) citizens.push(await register());
    for (const citizen of citizens) await fund(citizen.wallet, 50);

    const kills: Array<{ afterSigned: number; jitterMs: number; cutOff: number; recoveredMs: number }> = [];
    for (let round = 0; round < KILLS; round++) {
      const target = api!;
      // A kill point: once the k-th transaction of this round is signed and stored (so it is being sent or
      // confirmed, or about to be), plus a random few milliseconds.
      const afterSigned = 1 + Math.floor(random() * 15);
      const jitterMs = Math.floor(random() * 200);
      const baseline = await signedRows();
      const running = load(target, citizens);
      await until(`${afterSigned} signed transactions`, 30_000, async () => ((await signedRows()) >= baseline + afterSigned ? true : undefined), 3);
      await new Promise((resolve) => setTimeout(resolve, jitterMs));
      const lostBefore = sent.filter((s) => s.lost).length;
      running.stop();
      await target.kill();
      await running.done;
      const cutOff = sent.filter((s) => s.lost).length - lostBefore;
      const unsettled = await unsettledRows();
      api = await start();
      const recoveredMs = await recoveryAfterRestart(api);
      kills.push({ afterSigned, jitterMs, cutOff, recoveredMs });
      console.log(`kill ${round + 1}: after ${afterSigned} signed + ${jitterMs} ms, ${cutOff} requests cut off, ${unsettled} actions unsettled; all finished ${recoveredMs} ms after /readyz`);
    }
    // Every interrupted action finished within seconds of the restarted process answering, not when a lease ran out.
    expect(kills.map((k) => k.recoveredMs).filter((ms) => ms > 5_000)).toEqual([]);

    // The last round runs to the end: every request answered.
    await Promise.all(Array.from({ length: FINAL_TRANSFERS }, () => send(api!, plan(citizens))));
    const base = api!.url;

    const settled = await until('the outbox to settle', SETTLE_MS, async () => {
      const { rows } = await sql.query(`select state, count(*)::int as n from vault.chain_outbox group by state`);
      const byState = Object.fromEntries(rows.map((r) => [r.state, r.n as number]));
      return (byState.reserved ?? 0) + (byState.unsigned ?? 0) + (byState.sent ?? 0) === 0 ? byState : undefined;
    }, 100);

    // The chain, read from outside: every transaction that took lamports out of a citizen's wallet.
    const wallets = new Map(citizens.map((c) => [c.wallet, c]));
    const spends = new Map<string, { from: string; lamports: bigint | undefined }>();
    for (const citizen of citizens) {
      for (const signature of await spendsOf(connection, citizen.wallet)) {
        spends.set(signature, { from: citizen.wallet, lamports: lamportsMoved((await transaction(signature))!) });
      }
    }

    const entries = await ledgerEntries(base);
    const recorded = new Map<string, LedgerEntry[]>();
    for (const entry of entries.filter((e) => e.type === 'ActionRecorded')) {
      const signature = (entry.data as { signature: string }).signature;
      recorded.set(signature, [...(recorded.get(signature) ?? []), entry]);
    }

    // Every confirmed spend is on the ledger exactly once, by the citizen who paid for it.
    for (const [signature, spend] of spends) {
      expect({ signature, recorded: recorded.get(signature)?.length ?? 0 }).toEqual({ signature, recorded: 1 });
      expect(recorded.get(signature)![0]!.actor).toBe(wallets.get(spend.from)!.id);
    }
    // No record without a confirmed, successful transaction behind it.
    for (const signature of recorded.keys()) {
      const tx = await transaction(signature);
      expect({ signature, landed: tx !== null && tx.meta?.err === null }).toEqual({ signature, landed: true });
      expect(spends.has(signature)).toBe(true);
    }
    // Nothing moved twice: every request's amount is unique, so a second transfer with it would be a resend gone wrong.
    const byAmount = new Map<bigint, number>();
    for (const { lamports } of spends.values()) if (lamports !== undefined) byAmount.set(lamports, (byAmount.get(lamports) ?? 0) + 1);
    expect([...byAmount].filter(([, n]) => n > 1)).toEqual([]);

    // Every request answered 200 is recorded, at the seq it was told; every answer is one a client can act on.
    const ok = sent.filter((s) => s.reply?.status === 200);
    for (const request of ok) {
      const [entry] = recorded.get(request.reply!.body.signature) ?? [];
      expect({ signature: request.reply!.body.signature, seq: entry?.seq }).toEqual({ signature: request.reply!.body.signature, seq: request.reply!.body.ledger.seq });
      expect(spends.get(request.reply!.body.signature)?.lamports).toBe(request.lamports);
    }
    const otherReplies = sent.filter((s) => s.reply && s.reply.status !== 200);
    expect(otherReplies.map((s) => [s.reply!.status, s.reply!.body?.error?.code])).toEqual([]);
    // The final round was not interrupted: all of it confirmed.
    expect(sent.slice(-FINAL_TRANSFERS).every((s) => s.reply?.status === 200)).toBe(true);

    // An outbox row marked failed never took effect on-chain.
    const { rows: failed } = await sql.query(`select signature from vault.chain_outbox where state in ('failed', 'rejected') and signature is not null`);
    for (const { signature } of failed) expect(spends.has(signature)).toBe(false);

    const attest = await call(base, 'GET', '/api/v1/attest');
    expect(attest.body).toMatchObject({ ok: true, verified: { ok: true } });

    const recoveryPasses = rig.children
      .flatMap((child) => child.output)
      .filter((line) => line.includes('"msg":"outbox recovery pass"'))
      .flatMap((line) => JSON.parse(line).settled as Array<{ outcome: string }>);
    const recoveryOutcomes: Record<string, number> = {};
    for (const { outcome } of recoveryPasses) recoveryOutcomes[outcome] = (recoveryOutcomes[outcome] ?? 0) + 1;
    const answeredSignatures = new Set(ok.map((s) => s.reply!.body.signature as string));
    const recovered = [...recorded.keys()].filter((s) => !answeredSignatures.has(s)).length;
    console.log(
      JSON.stringify({
        seed: SEED,
        kills: kills.length,
        requests: sent.length,
        cut_off: sent.filter((s) => s.lost).length,
        retried_with_key: sent.filter((s) => s.lost && s.idempotencyKey).length,
        answered_200: ok.length,
        confirmed_spends: spends.size,
        recorded: recorded.size,
        recorded_without_a_200: recovered,
        recovery_passes_settled: recoveryOutcomes,
        recovered_ms_after_readyz: kills.map((k) => k.recoveredMs),
        outbox: settled,
        seconds: Math.round((Date.now() - began) / 1000),
      }),
    );
  }, 300_000);
});
