import { PublicKey } from '@solana/web3.js';
import { SIGKILL_AFTER_SEND_ENV } from '@svc/actions';
import { airdrop, registerCitizen } from '../support/citizens';
import { CrashRig } from '../support/crash';
import { call } from '../support/http';
import { ledgerEntries } from '../support/ledger';
import { until } from '../support/until';

const EVERY = 4;

/**
 * `npm start` against a chain of its own, killed with SIGKILL by the pipeline's test hook right after an anchor's
 * transaction confirmed and before it was recorded: the memo is on Solana and the ledger does not know it. The next
 * process records it, exactly once, and anchors nothing twice.
 */
describe('an anchor killed between send and record', () => {
  let rig: CrashRig;

  beforeAll(async () => {
    rig = await CrashRig.start('anchors-crash');
  }, 120_000);
  afterAll(() => rig?.close());

  it('is recorded once by the next process, from what the outbox kept', async () => {
    const env = { ANCHOR_EVERY_ENTRIES: String(EVERY), ANCHOR_INTERVAL_MS: '0', OUTBOX_RECOVERY_MS: '200' };
    const first = await rig.startService({ ...env, [SIGKILL_AFTER_SEND_ENV]: 'anchor' });
    const killed = new Promise<NodeJS.Signals | null>((resolve) => first.child.once('exit', (_code, signal) => resolve(signal)));
    const wallet = (await call(first.url, 'GET', '/api/v1/treasury')).body.wallet as string;
    await airdrop(rig.connection, wallet, 1);
    // Entries enough for an anchor; the process dies once it sent it, perhaps while these still come in.
    for (let i = 0; i < EVERY; i++) await registerCitizen(first.url, 'crash').catch(() => undefined);
    expect(await killed).toBe('SIGKILL');

    const memos = async () => {
      const signatures = await rig.connection.getSignaturesForAddress(new PublicKey(wallet), {}, 'confirmed');
      const sent = [];
      for (const { signature } of signatures) {
        const tx = await rig.connection.getParsedTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
        const memo = tx?.transaction.message.instructions.find((ix) => 'parsed' in ix && ix.program === 'spl-memo');
        if (memo && 'parsed' in memo && String(memo.parsed).startsWith('svc-ledger:v1:')) sent.push({ signature, memo: String(memo.parsed) });
      }
      return sent;
    };
    const [sent] = await memos();
    expect(sent).toBeDefined();
    const { rows } = await rig.sql.query(`select count(*)::int as n from es.events where stream = 'ledger' and data like $1`, [`%${sent!.signature}%`]);
    expect(rows[0].n).toBe(0);

    const second = await rig.startService(env);
    const listed = await until('the killed anchor recorded', 60_000, async () => {
      const { anchors } = (await call(second.url, 'GET', '/api/v1/anchors')).body as { anchors: Array<{ seq: number; hash: string; signature: string }> };
      return anchors.some((a) => a.signature === sent!.signature) ? anchors : undefined;
    }, 100);
    const [, seq, hash] = sent!.memo.split(':').slice(1);
    expect(listed.find((a) => a.signature === sent!.signature)).toMatchObject({ seq: Number(seq), hash });

    // Once on the ledger, with the hash the ledger has at that seq; no seq anchored twice, on the ledger or on-chain.
    const entries = await ledgerEntries(second.url);
    const recorded = entries.filter((e) => e.type === 'ActionRecorded' && e.data.action === 'anchor');
    expect(recorded.filter((e) => e.data.signature === sent!.signature)).toHaveLength(1);
    expect(entries[Number(seq)]!.hash).toBe(hash);
    const anchoredSeqs = recorded.map((e) => (e.data.details as { seq: number }).seq);
    expect(new Set(anchoredSeqs).size).toBe(anchoredSeqs.length);
    const onChain = await memos();
    expect(onChain.map((m) => m.signature).sort()).toEqual(recorded.map((e) => e.data.signature as string).sort());
    expect((await call(second.url, 'GET', '/api/v1/attest')).body).toMatchObject({ verified: { ok: true } });
  }, 180_000);
});
