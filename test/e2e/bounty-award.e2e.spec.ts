import {
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemInstruction,
  SystemProgram,
  TransactionInstruction,
  VersionedTransaction,
} from '@solana/web3.js';
import { sql } from 'kysely';
import type { LedgerEntry } from '@svc/ledger';
import type { RunningApi } from '../../apps/api/src/server';
import type { RunningServer } from '../../scripts/embedded';
import { BountyAwardRig } from '../support/bountyAwards';
import { call } from '../support/http';
import { ledgerEntries } from '../support/ledger';

describe('POST /api/v1/bounties/{id}/award: the reward paid on the local chain, exactly once', () => {
  const rig = new BountyAwardRig();
  const { connection, heldRow, recoverAwards, whereHeld, citizen, fund, balance, bountyWithSubmission, award, bountyStatus, awardsOf, paymentsOf, transfersOutOf, signAndSend } = rig;
  let server: RunningServer;
  /** A second API process on the same databases, Redis and chain, as in the distributed deployment. */
  let second: RunningApi;
  let base: string;

  beforeAll(async () => {
    ({ server, second, base } = await rig.start('award'));
  }, 60_000);
  afterAll(() => rig.close());

  it('pays exactly reward_sol from the poster to the submitter, records the payment and closes the bounty', async () => {
    const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
    await fund(poster.wallet, 2);
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.123456789);
    const [posterBefore, submitterBefore] = [await balance(poster.wallet), await balance(submitter.wallet)];

    const res = await award(poster, bountyId, { submission_id: submissionId });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      bounty_id: bountyId,
      submission_id: submissionId,
      winner: { id: submitter.id, handle: submitter.handle, wallet: submitter.wallet },
      reward_sol: 0.123456789,
      signature: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/),
      explorer: expect.stringContaining(`https://explorer.solana.com/tx/${res.body.signature}?cluster=custom&customUrl=`),
      executed: true,
      ledger: { seq: expect.any(Number), hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    expect((await balance(submitter.wallet)) - submitterBefore).toBe(123_456_789n);
    const landed = await connection().getTransaction(res.body.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(landed?.meta?.err).toBeNull();
    expect(posterBefore - (await balance(poster.wallet))).toBe(123_456_789n + BigInt(landed!.meta!.fee));
    expect(landed!.meta!.fee).toBe(5000);
    expect(landed!.transaction.message.staticAccountKeys[0]!.toBase58()).toBe(poster.wallet);

    const got = await call(base, 'GET', `/api/v1/bounties/${bountyId}`);
    expect(got.body.bounty).toMatchObject({ status: 'awarded', award: { submission_id: submissionId, winner_id: submitter.id, signature: res.body.signature } });
    const activity = await call(base, 'GET', '/api/v1/activity?limit=200');
    expect(activity.body.actions.filter((a: any) => a.signature === res.body.signature)).toEqual([
      expect.objectContaining({
        action: 'award_payment',
        wallet: poster.wallet,
        agent: { id: poster.id, handle: poster.handle },
        details: { to: submitter.wallet, to_agent_id: submitter.id, amount_sol: 0.123456789, bounty_id: bountyId },
      }),
    ]);
    const entries = await ledgerEntries(base);
    expect(paymentsOf(entries, bountyId)).toEqual([expect.objectContaining({ actor: poster.id, data: expect.objectContaining({ signature: res.body.signature }) })]);
    const awarded = awardsOf(entries, bountyId);
    expect(awarded).toEqual([expect.objectContaining({ seq: res.body.ledger.seq, hash: res.body.ledger.hash })]);
    expect(awarded[0]!.data).toEqual({ bounty_id: bountyId, submission_id: submissionId, winner_id: submitter.id, reward_sol: 0.123456789, signature: res.body.signature });
    expect(await heldRow(bountyId)).toMatchObject({ state: 'done', signature: res.body.signature });
    const record = await call(base, 'GET', `/api/v1/record/${poster.handle}`);
    expect(record.body.actions).toEqual([expect.objectContaining({ action: 'award_payment', signature: res.body.signature })]);
    expect(record.body.events.map((e: LedgerEntry) => e.type)).toEqual(['CitizenRegistered', 'BountyPosted', 'ActionRecorded', 'BountyAwarded']);
    // Page by page, the action comes with the page holding its event, and only there.
    const perPage: string[][] = [];
    for (let after: number | null = -1; after !== null; ) {
      const page: any = await call(base, 'GET', `/api/v1/record/${poster.handle}?limit=1${after >= 0 ? `&after=${after}` : ''}`);
      perPage.push(page.body.actions.map((a: any) => a.action));
      after = page.body.next_after;
    }
    expect(perPage).toEqual([[], [], ['award_payment'], []]);

    const again = await award(poster, bountyId, { submission_id: submissionId });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'bounty_closed', message: expect.stringMatching(/already awarded/) });
    expect(await transfersOutOf(poster.wallet)).toEqual([res.body.signature]);
  });

  it('refuses a caller who is not the poster (403), unknown bounties and submissions (404), and bad bodies (400)', async () => {
    const [poster, submitter, other] = [await citizen('poster'), await citizen('solver'), await citizen('other')];
    await fund(poster.wallet, 1);
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.01);
    const elsewhere = await bountyWithSubmission(other, submitter, 0.01);

    const notPoster = await award(submitter, bountyId, { submission_id: submissionId });
    expect(notPoster.status).toBe(403);
    expect(notPoster.body).toEqual({ ok: false, error: { code: 'not_poster', message: expect.any(String) } });
    expect((await award(other, bountyId, { submission_id: submissionId })).body.error.code).toBe('not_poster');

    const unknownSubmission = await award(poster, bountyId, { submission_id: 'sub_01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect(unknownSubmission.status).toBe(404);
    expect(unknownSubmission.body.error.code).toBe('not_found');
    const otherBountysSubmission = await award(poster, bountyId, { submission_id: elsewhere.submissionId });
    expect(otherBountysSubmission.status).toBe(404);
    expect((await award(poster, 'bounty_01ARZ3NDEKTSV4RRFFQ69G5FAV', { submission_id: submissionId })).status).toBe(404);

    const missing = await award(poster, bountyId, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'invalid_request', field: 'submission_id' });
    expect((await award(poster, bountyId, { submission_id: 'post_1' })).body.error).toMatchObject({ code: 'invalid_request', field: 'submission_id' });
    expect((await award(poster, bountyId, { submission_id: submissionId, execute: 'yes' })).body.error).toMatchObject({ code: 'invalid_request', field: 'execute' });
    expect((await call(base, 'POST', `/api/v1/bounties/${bountyId}/award`, { body: { submission_id: submissionId } })).status).toBe(401);

    expect(await bountyStatus(bountyId)).toBe('open');
    expect(await transfersOutOf(poster.wallet)).toEqual([]);
  });

  it('answers 400 insufficient when the poster cannot pay, keeps the bounty open, and awards once funded', async () => {
    const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.5);
    await fund(poster.wallet, 0.2);

    const refused = await award(poster, bountyId, { submission_id: submissionId });

    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('insufficient');
    expect(refused.body.error.message).toContain('holds 0.2 SOL; this needs 0.500005 SOL (0.5 SOL + 0.000005 SOL network fee)');
    expect(await bountyStatus(bountyId)).toBe('open');
    expect(await heldRow(bountyId)).toBeUndefined();
    expect(await balance(submitter.wallet)).toBe(0n);

    await fund(poster.wallet, 1);
    const paid = await award(poster, bountyId, { submission_id: submissionId });
    expect(paid.status).toBe(200);
    expect(await balance(submitter.wallet)).toBe(500_000_000n);
    expect(await bountyStatus(bountyId)).toBe('awarded');
  });

  it('answers a payment the chain refuses at send with its program logs, and frees the bounty', async () => {
    const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
    await fund(poster.wallet, 0.1);
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.5);
    // The wallet is drained between the balance check and the send: the check reads a balance that is gone.
    const chain = connection();
    const getBalance = chain.getBalance.bind(chain);
    chain.getBalance = async (key, commitment) => (key.toBase58() === poster.wallet ? 10 * LAMPORTS_PER_SOL : getBalance(key, commitment));
    let refused;
    try {
      refused = await award(poster, bountyId, { submission_id: submissionId });
    } finally {
      chain.getBalance = getBalance;
    }

    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      code: 'insufficient',
      message: expect.stringMatching(/cannot cover/),
      logs: expect.arrayContaining([expect.stringMatching(/Transfer: insufficient lamports \d+, need 500000000/)]),
    });
    expect(await heldRow(bountyId)).toBeUndefined();
    expect(await bountyStatus(bountyId)).toBe('open');
    expect(await transfersOutOf(poster.wallet)).toEqual([]);
  });

  it('makes exactly one payment when 100 awards of one bounty arrive at once through two API processes', async () => {
    const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
    await fund(poster.wallet, 5);
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.75);

    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        call(i % 2 === 0 ? base : second.url, 'POST', `/api/v1/bounties/${bountyId}/award`, { key: poster.key, body: { submission_id: submissionId } }),
      ),
    );

    const won = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 409);
    expect(won).toHaveLength(1);
    expect(refused).toHaveLength(99);
    for (const r of refused) {
      expect(r.body.error.code).toBe('bounty_closed');
      expect(r.body.error.message).toMatch(/in progress|already awarded/);
    }
    expect(await transfersOutOf(poster.wallet)).toEqual([won[0]!.body.signature]);
    expect(await balance(submitter.wallet)).toBe(750_000_000n);
    const entries = await ledgerEntries(base);
    expect(awardsOf(entries, bountyId)).toHaveLength(1);
    expect(paymentsOf(entries, bountyId)).toHaveLength(1);
  }, 60_000);

  /** The one System transfer of an unsigned award, decoded; and its reference key. */
  function decodeUnsigned(base64: string) {
    const tx = VersionedTransaction.deserialize(Buffer.from(base64, 'base64'));
    expect(tx.signatures.every((s) => s.every((byte) => byte === 0))).toBe(true);
    // The transfer, and a compute-budget instruction that carries the reference (its program ignores accounts).
    expect(tx.message.compiledInstructions).toHaveLength(2);
    const [budget, ix] = tx.message.compiledInstructions;
    const keys = tx.message.staticAccountKeys;
    const accountsOf = (i: typeof ix) => i!.accountKeyIndexes.map((k) => ({ pubkey: keys[k]!, isSigner: tx.message.isAccountSigner(k), isWritable: tx.message.isAccountWritable(k) }));
    expect(keys[budget!.programIdIndex]!.equals(ComputeBudgetProgram.programId)).toBe(true);
    expect(keys[ix!.programIdIndex]!.equals(SystemProgram.programId)).toBe(true);
    const transfer = SystemInstruction.decodeTransfer(new TransactionInstruction({ programId: keys[ix!.programIdIndex]!, keys: accountsOf(ix), data: Buffer.from(ix!.data) }));
    expect(accountsOf(ix)).toHaveLength(2);
    return { tx, transfer, reference: accountsOf(budget)[0]! };
  }

  /** Lets the next recovery pass look at a bounty's outbox row now rather than when its lease ends. */
  const dueNow = (bountyId: string) => sql`update vault.chain_outbox set lease_until = now() where ${whereHeld(bountyId)}`.execute(server.services.database.db);

  it('with execute=false hands out the unsigned transfer, holds the bounty for it, and records it once the poster sends it', async () => {
    const [poster, submitter] = [await citizen('poster'), await citizen('solver')];
    await fund(poster.wallet, 1);
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.3);
    const head = server.services.writer.head.seq;

    const res = await award(poster, bountyId, { submission_id: submissionId, execute: false });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ok: true,
      executed: false,
      bounty_id: bountyId,
      submission_id: submissionId,
      reward_sol: 0.3,
      fee_payer: poster.wallet,
      winner: { id: submitter.id, wallet: submitter.wallet },
      reference: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/),
      last_valid_block_height: expect.any(Number),
    });
    expect(res.body.signature).toBeUndefined();
    const { tx, transfer, reference } = decodeUnsigned(res.body.transaction);
    expect(tx.message.staticAccountKeys[0]!.toBase58()).toBe(poster.wallet);
    expect(transfer).toEqual({ fromPubkey: new PublicKey(poster.wallet), toPubkey: new PublicKey(submitter.wallet), lamports: 300_000_000n });
    expect(reference).toEqual({ pubkey: new PublicKey(res.body.reference), isSigner: false, isWritable: false });
    // Nothing is public yet, but the bounty is held: asking again gives the same transaction, awarding with execute=true waits.
    expect(server.services.writer.head.seq).toBe(head);
    expect(await bountyStatus(bountyId)).toBe('open');
    expect((await award(poster, bountyId, { submission_id: submissionId, execute: false })).body.transaction).toBe(res.body.transaction);
    const meanwhile = await award(poster, bountyId, { submission_id: submissionId });
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.body.error).toMatchObject({ code: 'bounty_closed', message: expect.stringMatching(/unsigned award .* outstanding until block height/), reference: res.body.reference });
    expect(await transfersOutOf(poster.wallet)).toEqual([]);

    // The poster signs with the secret shown at registration and sends it straight to the chain.
    const signature = await signAndSend(res.body.transaction, poster.keypair!);
    await dueNow(bountyId);
    expect(await recoverAwards(second.services)).toEqual([{ bounty_id: bountyId, outcome: 'recorded' }]);

    expect(await bountyStatus(bountyId)).toBe('awarded');
    const entries = await ledgerEntries(base);
    expect(awardsOf(entries, bountyId)).toEqual([expect.objectContaining({ data: expect.objectContaining({ signature, reward_sol: 0.3, winner_id: submitter.id }) })]);
    expect(paymentsOf(entries, bountyId)).toHaveLength(1);
    expect(await heldRow(bountyId)).toMatchObject({ state: 'done', signature });
    expect(await balance(submitter.wallet)).toBe(300_000_000n);
    expect(await transfersOutOf(poster.wallet)).toEqual([signature]);
    const after = await award(poster, bountyId, { submission_id: submissionId, execute: false });
    expect(after.status).toBe(409);
    expect(after.body.error).toMatchObject({ code: 'bounty_closed', message: expect.stringMatching(/already awarded/) });
  });

  it('always hands a self-custody poster the unsigned transfer, and records it at the next award call once it landed', async () => {
    const own = Keypair.generate();
    const poster = await citizen('selfie', { custody: 'self', public_key: own.publicKey.toBase58() });
    const [submitter, rival] = [await citizen('solver'), await citizen('rival')];
    const { bountyId, submissionId } = await bountyWithSubmission(poster, submitter, 0.05);
    const other = await call(base, 'POST', `/api/v1/bounties/${bountyId}/submissions`, { key: rival.key, body: { body: 'mine is better' } });
    await fund(poster.wallet, 1);

    // execute defaults to true, but the service holds no key to sign with.
    const unsigned = await award(poster, bountyId, { submission_id: submissionId });
    expect(unsigned.status).toBe(200);
    expect(unsigned.body).toMatchObject({ executed: false, fee_payer: poster.wallet });
    // While it is outstanding, another submission cannot be awarded instead.
    const instead = await award(poster, bountyId, { submission_id: other.body.submission.id });
    expect(instead.body.error).toMatchObject({ code: 'bounty_closed', message: expect.stringMatching(/outstanding/) });

    const signature = await signAndSend(unsigned.body.transaction, own);
    const again = await award(poster, bountyId, { submission_id: submissionId });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'bounty_closed', message: expect.stringMatching(/already awarded/), signature });
    expect(await bountyStatus(bountyId)).toBe('awarded');
    expect(awardsOf(await ledgerEntries(base), bountyId)).toEqual([expect.objectContaining({ data: expect.objectContaining({ signature, submission_id: submissionId }) })]);
    expect(await balance(submitter.wallet)).toBe(50_000_000n);
    expect(await balance(rival.wallet)).toBe(0n);
    expect(await transfersOutOf(poster.wallet)).toEqual([signature]);
  });
});
