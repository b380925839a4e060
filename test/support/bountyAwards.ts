import { PublicKey, VersionedTransaction, type Keypair } from '@solana/web3.js';
import { sql } from 'kysely';
import type { LedgerEntry } from '@svc/ledger';
import type { RunningApi } from '../../apps/api/src/server';
import { bountyHold } from '../../apps/api/src/commands/awardBounty';
import type { RunningServer } from '../../scripts/embedded';
import { airdrop, outflowsOf, registerCitizen, type TestCitizen } from './citizens';
import { call } from './http';
import { embeddedService, startSecondApi, type EmbeddedService } from './servers';

/**
 * The service over a fresh database with a second API process beside it, for bounty-award tests: citizens funded on
 * the bundled chain, bounties with a submission to award, and what a test reads of the payment on the chain, on the
 * ledger and in the outbox.
 */
export class BountyAwardRig {
  private service?: EmbeddedService;
  server!: RunningServer;
  /** A second API process on the same databases, Redis and chain, as in the distributed deployment. */
  second!: RunningApi;
  base!: string;

  async start(label: string): Promise<this> {
    // The recovery passes in these tests are run by the tests themselves, so they can watch what each one does.
    this.service = await embeddedService(label, {}, { outboxRecoveryEveryMs: 3_600_000 });
    this.server = this.service.server;
    this.base = this.server.url;
    this.second = await startSecondApi(this.server);
    return this;
  }

  async close(): Promise<void> {
    await this.second?.close();
    await this.service?.close();
  }

  readonly connection = () => this.server.services.chain.connection;
  /** The live outbox row holding a bounty's one payment (a failed payment holds nothing). */
  readonly heldRow = (bountyId: string) => this.server.services.pipeline.outbox.byHold(bountyHold(bountyId));
  /** One recovery pass of a process's pipeline, read per bounty. */
  // An unsigned award an earlier test left handed out comes due again whenever its check lease runs out (on
  // a slow run, inside a later test): it stays `pending`, changes nothing, and no assertion here is about it.
  readonly recoverAwards = async (services: RunningApi['services']) =>
    (await services.pipeline.recover())
      .filter((settled) => settled.outcome !== 'pending')
      .map((settled) => ({ bounty_id: settled.hold_key!.replace(/^bounty:/, ''), outcome: settled.outcome }));
  readonly whereHeld = (bountyId: string) => sql`hold_key = ${bountyHold(bountyId)} and state <> 'failed'`;

  readonly citizen = (prefix: string, extra: Record<string, unknown> = {}): Promise<TestCitizen> => registerCitizen(this.base, prefix, extra);
  readonly fund = (wallet: string, sol: number) => airdrop(this.connection(), wallet, sol);
  readonly balance = async (wallet: string) => BigInt(await this.connection().getBalance(new PublicKey(wallet), 'confirmed'));

  readonly bountyWithSubmission = async (poster: TestCitizen, submitter: TestCitizen, reward_sol: number) => {
    const bounty = await call(this.base, 'POST', '/api/v1/bounties', { key: poster.key, body: { title: 'find the bug', body: 'details inside', reward_sol } });
    expect(bounty.status).toBe(201);
    const submission = await call(this.base, 'POST', `/api/v1/bounties/${bounty.body.bounty.id}/submissions`, { key: submitter.key, body: { body: 'here it is' } });
    expect(submission.status).toBe(201);
    return { bountyId: bounty.body.bounty.id as string, submissionId: submission.body.submission.id as string };
  };

  readonly award = (who: TestCitizen, bountyId: string, body: Record<string, unknown>) => call(this.base, 'POST', `/api/v1/bounties/${bountyId}/award`, { key: who.key, body });
  readonly bountyStatus = async (bountyId: string) => (await call(this.base, 'GET', `/api/v1/bounties/${bountyId}`)).body.bounty.status as string;

  readonly awardsOf = (entries: LedgerEntry[], bountyId: string) => entries.filter((e) => e.type === 'BountyAwarded' && e.data.bounty_id === bountyId);
  readonly paymentsOf = (entries: LedgerEntry[], bountyId: string) =>
    entries.filter((e) => e.type === 'ActionRecorded' && e.data.action === 'award_payment' && (e.data.details as { bounty_id?: string }).bounty_id === bountyId);

  readonly transfersOutOf = (wallet: string) => outflowsOf(this.connection(), wallet);

  /** What a poster does with an unsigned award: sign it with their own key and send it to the chain themselves. */
  readonly signAndSend = async (base64: string, signer: Keypair): Promise<string> => {
    const tx = VersionedTransaction.deserialize(Buffer.from(base64, 'base64'));
    tx.sign([signer]);
    const signature = await this.connection().sendRawTransaction(tx.serialize());
    const latest = await this.connection().getLatestBlockhash();
    await this.connection().confirmTransaction({ signature, ...latest }, 'confirmed');
    return signature;
  };
}
