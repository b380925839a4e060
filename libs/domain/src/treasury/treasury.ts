import type { ActionRecordedData } from '../actions/action';

/** The service's own citizen: its wallet receives the shared creator fees and buys back the service token. */
export const TREASURY_HANDLE = 'treasury';

/** Handles only the service registers: a citizen asking for one is refused like a taken handle. */
export function isReservedHandle(handle: string): boolean {
  return handle.toLowerCase() === TREASURY_HANDLE;
}

/**
 * What a treasury transaction did, as the chain showed it once confirmed: the pipeline reads the confirmed
 * transaction and records it under `details.observed` (see ObserveSpec in libs/chain).
 */
export interface ObservedMovement {
  /** The network fee the wallet paid. */
  fee_lamports: number;
  /** The wallet's SOL balance after the transaction less before (fee included). */
  sol_change_lamports: number;
  /** The wallet's balance of the observed mint after less before, in base units (a decimal string). */
  token_change_raw?: string;
  /** Rent put into the wallet's own accounts the transaction opened (its token account, volume accumulators). */
  rent_lamports: number;
}

/** One treasury action's part in the totals: SOL in from fees, SOL out into the service token, tokens bought and burned. */
export interface TreasuryFlow {
  received_lamports: bigint;
  spent_lamports: bigint;
  bought_raw: bigint;
  burned_raw: bigint;
}

const NONE: TreasuryFlow = { received_lamports: 0n, spent_lamports: 0n, bought_raw: 0n, burned_raw: 0n };

function integer(value: unknown): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  return 0n;
}

function observedOf(details: Record<string, unknown>): ObservedMovement | undefined {
  const observed = details.observed;
  return observed !== null && typeof observed === 'object' ? (observed as ObservedMovement) : undefined;
}

/**
 * The totals' arithmetic, the same for the projection and the worker's cycle summary: a distribution brought in
 * what the treasury's balance gained plus the fee it paid to send it; a buyback spent what its balance lost less
 * that fee and the rent of accounts it opened for itself, and bought what its token balance gained; a burn
 * destroyed `burned_raw`. Any other action moves nothing the totals count.
 */
export function treasuryFlowOf(data: Pick<ActionRecordedData, 'action' | 'details'>): TreasuryFlow {
  const details = data.details ?? {};
  switch (data.action) {
    case 'fee_distribution': {
      const observed = observedOf(details);
      if (!observed) return NONE;
      return { ...NONE, received_lamports: integer(observed.sol_change_lamports) + integer(observed.fee_lamports) };
    }
    case 'buyback': {
      const observed = observedOf(details);
      if (!observed) return NONE;
      return {
        ...NONE,
        spent_lamports: -integer(observed.sol_change_lamports) - integer(observed.fee_lamports) - integer(observed.rent_lamports),
        bought_raw: integer(observed.token_change_raw),
      };
    }
    case 'burn':
      return { ...NONE, burned_raw: integer(details.burned_raw) };
    default:
      return NONE;
  }
}
