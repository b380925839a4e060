import { SolanaJSONRPCError } from '@solana/web3.js';
import { recordedReceipt, rejectedOfChain, rpcUnavailable, unsettled } from '@svc/actions';
import { ChainError, MAINNET_GENESIS_HASH, balanceLamports, confirmAirdrop, isRpcUnreachable, lamportsToSol, requestAirdrop, solToLamports } from '@svc/chain';
import type { RequestOf, faucetBody } from '@svc/contracts';
import { Rejected } from '@svc/domain';
import type { AcceptedAirdrop, FaucetGrant } from '@svc/vault';
import type { Services } from '../services';

/** The faucet's allowance is counted over the last hour, rolling. */
const WINDOW_MS = 3_600_000;

export type FaucetInput = RequestOf<typeof faucetBody> & { idempotencyKey?: string };

export interface FaucetReply {
  signature: string;
  sol: number;
  wallet: string;
  balance_sol: number;
  ledger: { seq: number; hash: string };
}

/** What the chain side threw, as the caller's refusal: the chain's own, an unreachable RPC, or a fault. */
function chainRefusal(error: unknown): unknown {
  if (error instanceof ChainError) return rejectedOfChain(error);
  if (error instanceof SolanaJSONRPCError || isRpcUnreachable(error)) return rpcUnavailable(error);
  return error;
}

async function refuseMainnet(services: Services): Promise<void> {
  const genesis = await services.chain.genesisHash().catch((error: unknown) => {
    throw chainRefusal(error);
  });
  if (genesis === MAINNET_GENESIS_HASH) {
    throw new Rejected('faucet_unavailable', 'the faucet is only for test clusters (the bundled local chain, devnet, testnet); this service runs on mainnet, where SOL is not free');
  }
}

function overCap(services: Services, sol: number, usedLamports: bigint, freesAt: number, now: number): Rejected {
  const cap = services.config.faucetSolPerHour;
  const used = lamportsToSol(usedLamports);
  const seconds = Math.max(1, Math.ceil((freesAt - now) / 1000));
  const fits = sol > cap ? `no request over ${cap} SOL ever fits` : `${sol} SOL more fits in ${seconds} s`;
  return new Rejected('faucet_cap', `hourly faucet cap reached: ${cap} SOL per citizen per rolling hour, ${used} SOL taken in the last hour; ${fits}`, { used, cap }, seconds);
}

/** The airdrop of `grant`, asked of the cluster's faucet unless an earlier attempt under its key was accepted already. */
async function accepted(services: Services, wallet: string, grant: FaucetGrant): Promise<AcceptedAirdrop> {
  if (grant.airdrop) return grant.airdrop;
  const airdrop = await requestAirdrop(services.chain.connection, wallet, grant.lamports).catch(async (error: unknown) => {
    await services.vault.faucet.release(grant.id);
    throw chainRefusal(error);
  });
  await services.vault.faucet.accepted(grant.id, airdrop);
  return airdrop;
}

async function confirmed(services: Services, grant: FaucetGrant, airdrop: AcceptedAirdrop): Promise<void> {
  try {
    await confirmAirdrop(services.chain.connection, airdrop);
  } catch (error) {
    if (!(error instanceof ChainError)) throw unsettled(airdrop.signature, 'its confirmation could not be seen');
    await services.vault.faucet.release(grant.id);
    throw rejectedOfChain(error);
  }
}

async function recorded(services: Services, grant: FaucetGrant, wallet: string, signature: string): Promise<{ seq: number; hash: string }> {
  if (grant.receipt) return grant.receipt;
  let outcome;
  try {
    outcome = await services.writer.executeAtHead({
      type: 'RecordAction',
      agentId: grant.agentId,
      data: { action: 'faucet', signature, wallet, details: { sol: lamportsToSol(grant.lamports) } },
    });
  } catch (error) {
    services.log.error({ err: error, grant: grant.id, signature }, 'airdrop confirmed but not yet recorded');
    throw unsettled(signature, 'it could not be written to the ledger yet; retry with the same Idempotency-Key to record it');
  }
  if (!outcome.ok) throw Rejected.of(outcome.rejection);
  const last = outcome.entries.at(-1);
  const receipt = last ? { seq: last.seq, hash: last.hash } : await recordedReceipt(services, signature);
  await services.vault.faucet.recorded(grant.id, receipt);
  return receipt;
}

/**
 * POST /api/v1/faucet: test SOL from the cluster's own faucet into the caller's wallet, confirmed and recorded on
 * the ledger before the reply. The hourly allowance is reserved before the faucet is asked and given back when
 * the airdrop does not happen; a retry under the same Idempotency-Key finishes the airdrop it started.
 */
export async function faucet(services: Services, agentId: string, input: FaucetInput): Promise<FaucetReply> {
  const citizen = await services.writer.read((state) => state.citizens.byId.get(agentId));
  if (!citizen) throw new Rejected('not_found', `citizen ${agentId} not found`);
  await refuseMainnet(services);
  const now = services.clock();
  const reservation = await services.vault.faucet.reserve({
    agentId,
    idempotencyKey: input.idempotencyKey,
    lamports: solToLamports(input.sol),
    capLamports: solToLamports(services.config.faucetSolPerHour),
    windowMs: WINDOW_MS,
    now,
  });
  if (reservation.kind === 'over') throw overCap(services, input.sol, reservation.usedLamports, reservation.freesAt, now);
  const { grant } = reservation;
  const airdrop = await accepted(services, citizen.wallet, grant);
  if (!grant.receipt) await confirmed(services, grant, airdrop);
  const ledger = await recorded(services, grant, citizen.wallet, airdrop.signature);
  const balance = await balanceLamports(services.chain.connection, citizen.wallet).catch((error: unknown) => {
    // Not chainRefusal's "nothing arrived": the SOL is there and recorded; a retry under the key only reads again.
    if (!(error instanceof SolanaJSONRPCError || isRpcUnreachable(error))) throw error;
    throw new Rejected(
      'unavailable',
      `the airdrop ${airdrop.signature} arrived and is on the ledger at seq ${ledger.seq}, but the wallet's balance could not be read` +
        (input.idempotencyKey ? '; retry with the same Idempotency-Key for the whole reply' : '; GET /api/v1/wallet shows it (a retry without an Idempotency-Key is a new airdrop)'),
      { signature: airdrop.signature },
      5,
    );
  });
  return { signature: airdrop.signature, sol: lamportsToSol(grant.lamports), wallet: citizen.wallet, balance_sol: lamportsToSol(balance), ledger };
}
