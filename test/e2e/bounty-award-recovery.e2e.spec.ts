import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PublicKey, SystemProgram, TransactionExpiredBlockheightExceededError, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { sql } from 'kysely';
import { messageHash } from '@svc/actions';
import { SolanaChain, buildSolTransfer, recentBlockhash, signTransaction, solToLamports } from '@svc/chain';
import type { RunningApi } from '../../apps/api/src/server';
import { bountyHold } from '../../apps/api/src/commands/awardBounty';
import type { RunningServer } from '../../scripts/embedded';
import { BountyAwardRig } from '../support/bountyAwards';
import type { TestCitizen } from '../support/citizens';
import { call } from '../support/http';
import { ledgerEntries } from '../support/ledger';

/** Awards whose payment meets an unreachable RPC, an expired blockhash or a crash, and the recovery passes that settle them. */
describe('POST /api/v1/bounties/{id}/award: the reward paid on the local chain, exactly once', () => {
  const rig = new BountyAwardRig();
  const { connection, heldRow, recoverAwards, whereHeld, citizen, fund, balance, bountyWithSubmission, award, bountyStatus, awardsOf, paymentsOf, transfersOutOf, signAndSend } = rig;
  let server: RunningServer;
  /** A second API process on the same databases, Redis and chain, as in the distributed deployment. */
  let second: RunningApi;
  let base: string;

  beforeAll(async () => {
    ({ server, second, base } = await rig.start('award_recovery'));
  }, 60_000);
  afterAll(() => rig.close());

  it('frees the bounty when an unsigned award expires unsent, and refuses one the poster cannot pay', async () => {
    const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.2);
    const broke = await award(poster, bountyId, { submission_id: submissionId, execute: false });
    expect(broke.status).toBe(400);
    expect(broke.body.error.code).toBe('insufficient');
    expect(await heldRow(bountyId)).toBeUndefined();

    await fund(poster.wallet, 1);
    const handed = await award(poster, bountyId, { submission_id: submissionId, execute: false });
    expect(handed.status).toBe(200);
    // Its blockhash expires (the chain passes its last valid height) and nobody sent it.
    const height = await connection().getBlockHeight('confirmed');
    await sql`update vault.chain_outbox set last_valid_block_height = ${height - 1}, lease_until = now() where ${whereHeld(bountyId)}`.execute(server.services.database.db);
    expect(await recoverAwards(server.services)).toEqual([{ bounty_id: bountyId, outcome: 'released' }]);
    expect(await heldRow(bountyId)).toBeUndefined();
    expect(await bountyStatus(bountyId)).toBe('open');

    const paid = await award(poster, bountyId, { submission_id: submissionId });
    expect(paid.status).toBe(200);
    expect(await transfersOutOf(poster.wallet)).toEqual([paid.body.signature]);
  });

  /** Awards (execute true, then false) through the second process while its RPC, behind a load balancer, answers 503 to everything. */
  async function awardsWithTheRpcDown(poster: TestCitizen, bountyId: string, submissionId: string) {
    const down = http.createServer((_req, res) => res.writeHead(503).end('no healthy upstream'));
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const reachable = second.services.chain;
    second.services.chain = new SolanaChain({ rpcUrl: `http://127.0.0.1:${(down.address() as AddressInfo).port}` });
    try {
      const replies = [];
      for (const execute of [true, false]) {
        replies.push(await call(second.url, 'POST', `/api/v1/bounties/${bountyId}/award`, { key: poster.key, body: { submission_id: submissionId, execute } }));
      }
      return replies;
    } finally {
      await second.services.chain.close();
      second.services.chain = reachable;
      await new Promise((resolve) => down.close(resolve));
    }
  }

  it('finds a sent unsigned award however many transactions name its reference, so it is never freed and paid twice', async () => {
    const [poster, submitter, griefer] = [await citizen('poster'), await citizen('solver'), await citizen('griefer')];
    await fund(poster.wallet, 1);
    await fund(griefer.wallet, 1);
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.5);
    const handed = await award(poster, bountyId, { submission_id: submissionId, execute: false });
    const signature = await signAndSend(handed.body.transaction, poster.keypair!);
    // Once it landed the reference is public: anyone can name it in transactions of their own.
    for (let i = 0; i < 30; i++) {
      const noise = SystemProgram.transfer({ fromPubkey: griefer.keypair!.publicKey, toPubkey: griefer.keypair!.publicKey, lamports: i + 1 });
      noise.keys.push({ pubkey: new PublicKey(handed.body.reference), isSigner: false, isWritable: false });
      const recent = await recentBlockhash(connection());
      const tx = new VersionedTransaction(new TransactionMessage({ payerKey: griefer.keypair!.publicKey, recentBlockhash: recent.blockhash, instructions: [noise] }).compileToV0Message());
      await connection().sendRawTransaction(signTransaction(tx, [griefer.keypair!], recent).wire);
    }
    // The recovery pass only looks once the blockhash has expired: a miss now would free the bounty.
    const height = await connection().getBlockHeight('confirmed');
    await sql`update vault.chain_outbox set last_valid_block_height = ${height - 1}, lease_until = now() where ${whereHeld(bountyId)}`.execute(server.services.database.db);
    expect(await recoverAwards(server.services)).toEqual([{ bounty_id: bountyId, outcome: 'recorded' }]);
    expect(await bountyStatus(bountyId)).toBe('awarded');
    expect((await award(poster, bountyId, { submission_id: submissionId })).status).toBe(409);
    expect(await balance(submitter.wallet)).toBe(500_000_000n);
    expect(awardsOf(await ledgerEntries(base), bountyId)).toEqual([expect.objectContaining({ data: expect.objectContaining({ signature }) })]);
  });

  it('answers 503, not 500, when an unsigned award holds the bounty and the RPC cannot be reached to check it', async () => {
    const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
    await fund(poster.wallet, 1);
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.01);
    expect((await award(poster, bountyId, { submission_id: submissionId, execute: false })).status).toBe(200);
    for (const res of await awardsWithTheRpcDown(poster, bountyId, submissionId)) {
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/still holds it/) });
    }
    expect(await heldRow(bountyId)).toMatchObject({ state: 'unsigned' });
  });

  it('answers 503 when the Solana RPC cannot be reached, pays nothing, and leaves the bounty awardable', async () => {
    const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
    await fund(poster.wallet, 1);
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.01);
    for (const res of await awardsWithTheRpcDown(poster, bountyId, submissionId)) {
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/could not be reached.*nothing was sent/) });
      expect(res.headers.get('retry-after')).toBe('5');
    }
    expect(await heldRow(bountyId)).toBeUndefined();
    expect((await award(poster, bountyId, { submission_id: submissionId })).status).toBe(200);
  });

  it('keeps the bounty held when a sent payment was processed but not confirmed as its blockhash expired', async () => {
    const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
    await fund(poster.wallet, 1);
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.07);
    // The RPC reports the expiry before the confirmation, and the last status look finds it only processed.
    const chain = connection();
    const [confirm, status] = [chain.confirmTransaction.bind(chain), chain.getSignatureStatus.bind(chain)];
    chain.confirmTransaction = (async () => {
      throw new TransactionExpiredBlockheightExceededError('expired');
    }) as typeof chain.confirmTransaction;
    chain.getSignatureStatus = (async (signature: string, config?: any) => {
      const real = await status(signature, config);
      return real.value ? { ...real, value: { ...real.value, confirmationStatus: 'processed' } } : real;
    }) as typeof chain.getSignatureStatus;
    let res;
    try {
      res = await award(poster, bountyId, { submission_id: submissionId });
    } finally {
      chain.confirmTransaction = confirm;
      chain.getSignatureStatus = status;
    }
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'unavailable', signature: expect.any(String) });
    // Not "nothing was paid": the bounty stays held, and the payment did land.
    expect(await heldRow(bountyId)).toMatchObject({ state: 'sent', signature: res.body.error.signature });
    expect((await award(poster, bountyId, { submission_id: submissionId })).status).toBe(409);
    expect(await recoverAwards(server.services)).toEqual([{ bounty_id: bountyId, outcome: 'recorded' }]);
    expect(await bountyStatus(bountyId)).toBe('awarded');
    expect(await transfersOutOf(poster.wallet)).toEqual([res.body.error.signature]);
  });

  describe('recovery of a payment that was sent but not recorded', () => {
    it('records a confirmed payment whose ledger append failed, exactly once however often recovery runs', async () => {
      const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
      await fund(poster.wallet, 1);
      const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.2);
      const { writer } = server.services;
      const executeAtHead = writer.executeAtHead.bind(writer);
      // The process "crashes" between the confirmed payment and the append.
      writer.executeAtHead = (command) => (command.type === 'AwardBounty' ? Promise.reject(new Error('simulated crash before append')) : executeAtHead(command));
      let res;
      try {
        res = await award(poster, bountyId, { submission_id: submissionId });
      } finally {
        writer.executeAtHead = executeAtHead;
      }
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ code: 'unavailable', signature: expect.any(String) });
      const signature = res.body.error.signature as string;
      expect(await balance(submitter.wallet)).toBe(200_000_000n);
      expect(await heldRow(bountyId)).toMatchObject({ state: 'sent', signature });
      // Meanwhile nobody else can pay it.
      expect((await award(poster, bountyId, { submission_id: submissionId })).body.error).toMatchObject({ code: 'bounty_closed', message: expect.stringMatching(/in progress/) });

      expect(await recoverAwards(server.services)).toEqual([{ bounty_id: bountyId, outcome: 'recorded' }]);
      expect(await heldRow(bountyId)).toMatchObject({ state: 'done', signature });

      // A crash after the append but before the row was marked done: the next pass finds it recorded.
      await sql`update vault.chain_outbox set state = 'sent', lease_until = now() where ${whereHeld(bountyId)}`.execute(server.services.database.db);
      expect(await recoverAwards(second.services)).toEqual([{ bounty_id: bountyId, outcome: 'recorded' }]);
      expect(await recoverAwards(server.services)).toEqual([]);

      expect(await heldRow(bountyId)).toMatchObject({ state: 'done', signature });
      const entries = await ledgerEntries(base);
      expect(awardsOf(entries, bountyId)).toEqual([expect.objectContaining({ data: expect.objectContaining({ signature }) })]);
      expect(paymentsOf(entries, bountyId)).toHaveLength(1);
      expect(await bountyStatus(bountyId)).toBe('awarded');
      expect(await transfersOutOf(poster.wallet)).toEqual([signature]);
      expect(await balance(submitter.wallet)).toBe(200_000_000n);
    });

    /** What the award handler leaves when it stops after storing the signed payment and before sending it. */
    async function storedButNotSent(poster: TestCitizen, winner: TestCitizen, bountyId: string, submissionId: string, lamports: bigint, expired: boolean) {
      const { outbox } = server.services.pipeline;
      const [id, attemptId] = [`act_test_${randomBytes(4).toString('hex')}`, randomBytes(8).toString('hex')];
      const record = { type: 'AwardBounty', agentId: poster.id, data: { bounty_id: bountyId, submission_id: submissionId } };
      expect(
        await outbox.reserve({ id, attemptId, agentId: poster.id, action: 'award_payment', holdKey: bountyHold(bountyId), record, summary: { bounty_id: bountyId }, leaseMs: 0 }),
      ).toEqual({ ok: true });
      const recent = await recentBlockhash(connection());
      const transfer = buildSolTransfer({ from: poster.wallet, to: winner.wallet, lamports }, recent);
      const signed = signTransaction(transfer, [poster.keypair!], recent);
      const height = await connection().getBlockHeight('confirmed');
      expect(
        await outbox.markSigned(id, attemptId, {
          signature: signed.signature,
          messageHash: messageHash(transfer.message),
          transaction: Buffer.from(signed.wire).toString('base64'),
          blockhash: signed.blockhash,
          // An expired blockhash is one whose last valid height the chain has passed.
          lastValidBlockHeight: expired ? height - 1 : signed.lastValidBlockHeight,
          leaseMs: 0,
        }),
      ).toMatchObject({ state: 'sent', signature: signed.signature });
      return signed.signature;
    }

    it('resends a stored payment that never reached the chain, then records it, once across two processes', async () => {
      const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
      await fund(poster.wallet, 1);
      const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.04);
      const signature = await storedButNotSent(poster, submitter, bountyId, submissionId, solToLamports(0.04), false);
      expect((await connection().getSignatureStatus(signature, { searchTransactionHistory: true })).value).toBeNull();

      // Both processes' passes at once: one of them takes the row.
      const passes = await Promise.all([recoverAwards(server.services), recoverAwards(second.services)]);
      expect(passes.flat()).toEqual([{ bounty_id: bountyId, outcome: 'recorded' }]);

      expect(await heldRow(bountyId)).toMatchObject({ state: 'done', signature });
      expect(await balance(submitter.wallet)).toBe(40_000_000n);
      expect(await transfersOutOf(poster.wallet)).toEqual([signature]);
      expect(awardsOf(await ledgerEntries(base), bountyId)).toEqual([expect.objectContaining({ data: expect.objectContaining({ signature }) })]);
    });

    it('drops a stored payment whose blockhash expired without it landing: the bounty opens again', async () => {
      const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
      await fund(poster.wallet, 1);
      const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.04);
      await storedButNotSent(poster, submitter, bountyId, submissionId, solToLamports(0.04), true);

      // Marked failed (kept, with why), which frees the bounty.
      expect(await recoverAwards(server.services)).toEqual([{ bounty_id: bountyId, outcome: 'failed' }]);

      expect(await heldRow(bountyId)).toBeUndefined();
      expect(await bountyStatus(bountyId)).toBe('open');
      expect(await balance(submitter.wallet)).toBe(0n);
      const paid = await award(poster, bountyId, { submission_id: submissionId });
      expect(paid.status).toBe(200);
      expect(await transfersOutOf(poster.wallet)).toEqual([paid.body.signature]);
    });
  });
});
