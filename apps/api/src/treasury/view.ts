import { PublicKey } from '@solana/web3.js';
import { explorerUrl, isRpcUnreachable, lamportsToSol, rawToUi } from '@svc/chain';
import { TREASURY_HANDLE } from '@svc/domain';
import { TreasuryCycleStore } from '@svc/marketdata';
import { treasury } from '@svc/projections';
import { TREASURY_WALLET, serviceTokenMint } from '@svc/runtime';
import { TREASURY_SHARE_BPS } from '../commands/deploy';
import type { Services } from '../services';

/** Transactions `recent` lists. */
export const RECENT_TREASURY_ACTIONS = 20;
/** pump coins have 6 decimals: the service token's before any buyback or burn says otherwise. */
const PUMP_DECIMALS = 6;

async function solBalance(services: Services, wallet: string): Promise<number | null> {
  try {
    return lamportsToSol(await services.chain.connection.getBalance(new PublicKey(wallet), 'confirmed'));
  } catch (error) {
    if (isRpcUnreachable(error)) return null;
    throw error;
  }
}

/**
 * GET /api/v1/treasury: the treasury wallet and its live balance, the service token, the totals and the latest
 * transactions as the ledger has them (the treasury projection), and the workers' last cycle.
 */
export async function treasuryView(services: Services): Promise<Record<string, unknown>> {
  const { db, schema } = services.readModel;
  const wallet = (await services.serviceWallets.wallet(TREASURY_WALLET)).publicKey;
  const [sol, mint, totals, recent, coinsSharing, lastCycle] = await Promise.all([
    solBalance(services, wallet),
    serviceTokenMint(services),
    treasury.totals(db, schema),
    treasury.recentActions(db, schema, RECENT_TREASURY_ACTIONS),
    treasury.countSharingCoins(db, schema, wallet),
    TreasuryCycleStore.forDatabase(db).then((store) => store.lastCycle()),
  ]);
  const decimals = totals.token_decimals ?? PUMP_DECIMALS;
  const rpcUrl = services.chain.connection.rpcEndpoint;
  const { config } = services;
  return {
    handle: TREASURY_HANDLE,
    agent_id: totals.agent_id,
    wallet,
    sol,
    fee_share_bps: TREASURY_SHARE_BPS,
    token_mint: mint ?? null,
    burn: true,
    totals: {
      fees_distributed_sol: lamportsToSol(totals.fees_received_lamports),
      sol_spent: lamportsToSol(totals.sol_spent_lamports),
      tokens_bought: rawToUi(totals.tokens_bought_raw, decimals),
      tokens_burned: rawToUi(totals.tokens_burned_raw, decimals),
      coins_sharing: coinsSharing,
      distributions: totals.distributions,
      buybacks: totals.buybacks,
      burns: totals.burns,
      fees_distributed_lamports: totals.fees_received_lamports.toString(),
      sol_spent_lamports: totals.sol_spent_lamports.toString(),
      tokens_bought_raw: totals.tokens_bought_raw.toString(),
      tokens_burned_raw: totals.tokens_burned_raw.toString(),
    },
    recent: recent.map((row) => ({
      seq: row.seq,
      at: row.at,
      action: row.action,
      signature: row.signature,
      explorer: explorerUrl(row.signature, rpcUrl),
      mint: row.mint,
      ...(row.action === 'fee_distribution' ? { received_sol: lamportsToSol(row.received_lamports) } : {}),
      ...(row.action === 'buyback' ? { spent_sol: lamportsToSol(row.spent_lamports), tokens_bought: rawToUi(row.bought_raw, decimals) } : {}),
      ...(row.action === 'burn' ? { tokens_burned: rawToUi(row.burned_raw, decimals) } : {}),
      details: row.details,
    })),
    last_cycle: lastCycle,
    cycle: { every_ms: config.treasuryCycleMs, reserve_sol: config.treasuryReserveSol, min_buy_sol: config.treasuryMinBuySol },
  };
}
