import { Journal, JournaledMap, type LedgerEntry } from '@svc/ledger/model';

/** A citizen's spending rules; null is no rule. SOL amounts in SOL, as the API takes them. */
export interface Policy {
  max_sol_per_trade: number | null;
  max_sol_per_day: number | null;
  allowed_recipients: string[] | null;
  allowed_mints: string[] | null;
}

export type PolicyRule = keyof Policy;

export const NO_POLICY: Policy = { max_sol_per_trade: null, max_sol_per_day: null, allowed_recipients: null, allowed_mints: null };

/** A loosening that waits for its owner to see it: it takes effect at `effective_at` unless cancelled. */
export interface PendingPolicy {
  policy: Policy;
  effective_at: number;
}

export interface PolicySetData {
  /** In force from this entry on. */
  policy: Policy;
  pending: PendingPolicy | null;
}

export interface SpendReservedData {
  reservation: string;
  action: string;
  lamports: number;
  day: string;
  /** Past this the reservation counts no more: the transaction it was made for can no longer land. */
  until: number;
}

export type PolicyEvent =
  | { type: 'PolicySet'; actor: string; data: PolicySetData }
  | { type: 'PolicyChangeCancelled'; actor: string; data: PendingPolicy }
  | { type: 'SpendReserved'; actor: string; data: SpendReservedData }
  | { type: 'SpendReleased'; actor: string; data: { reservation: string } };

interface OpenReservation {
  lamports: number;
  day: string;
  until: number;
}

/** What a citizen spent under a day cap: only the latest day's settled total, and the reservations still open. */
export interface Spending {
  day: string;
  spent: number;
  open: Record<string, OpenReservation>;
}

export interface PoliciesState {
  byAgent: JournaledMap<string, PolicySetData>;
  spending: JournaledMap<string, Spending>;
}

export function initialPolicies(journal: Journal, json?: unknown): PoliciesState {
  const parts = json as { byAgent?: Array<[string, PolicySetData]>; spending?: Array<[string, Spending]> } | undefined;
  return {
    byAgent: new JournaledMap(journal, 'policies.byAgent', parts?.byAgent),
    spending: new JournaledMap(journal, 'policies.spending', parts?.spending),
  };
}

export function snapshotPolicies(state: PoliciesState): unknown {
  return { byAgent: state.byAgent.toJSON(), spending: state.spending.toJSON() };
}

/** The policy in force at `now`: a pending loosening is in force once its time has come, with no entry of its own. */
export function policyInForce(state: PoliciesState, agentId: string, now: number): { policy: Policy; pending: PendingPolicy | null } {
  const set = state.byAgent.get(agentId);
  if (!set) return { policy: NO_POLICY, pending: null };
  if (set.pending && set.pending.effective_at <= now) return { policy: set.pending.policy, pending: null };
  return set;
}

/** Lamports counted against the day cap on `day` at `now`: settled spending plus open reservations not yet expired. */
export function spentOn(state: PoliciesState, agentId: string, day: string, now: number): number {
  const spending = state.spending.get(agentId);
  if (!spending) return 0;
  let used = spending.day === day ? spending.spent : 0;
  for (const open of Object.values(spending.open)) if (open.day === day && open.until > now) used += open.lamports;
  return used;
}

/** Settles a reservation whose transaction was recorded: what it reserved is spent on its day. */
export function settleReservation(state: PoliciesState, agentId: string, reservation: string): void {
  const spending = state.spending.get(agentId);
  const open = spending?.open[reservation];
  if (!spending || !open) return;
  const { [reservation]: _settled, ...rest } = spending.open;
  const spent = open.day === spending.day ? spending.spent + open.lamports : open.day > spending.day ? open.lamports : spending.spent;
  state.spending.set(agentId, { day: open.day > spending.day ? open.day : spending.day, spent, open: rest });
}

function dropExpired(open: Record<string, OpenReservation>, at: number): Record<string, OpenReservation> {
  return Object.fromEntries(Object.entries(open).filter(([, reservation]) => reservation.until > at));
}

export function evolvePolicies(state: PoliciesState, event: PolicyEvent & Pick<LedgerEntry, 'at'>): void {
  switch (event.type) {
    case 'PolicySet':
      state.byAgent.set(event.actor, { policy: event.data.policy, pending: event.data.pending });
      return;
    case 'PolicyChangeCancelled': {
      const set = state.byAgent.get(event.actor);
      if (set) state.byAgent.set(event.actor, { policy: set.policy, pending: null });
      return;
    }
    case 'SpendReserved': {
      const { reservation, lamports, day, until } = event.data;
      const spending = state.spending.get(event.actor) ?? { day, spent: 0, open: {} };
      // Expired reservations are dropped as new ones come, so the state does not grow with failed attempts.
      state.spending.set(event.actor, { ...spending, open: { ...dropExpired(spending.open, event.at), [reservation]: { lamports, day, until } } });
      return;
    }
    case 'SpendReleased': {
      const spending = state.spending.get(event.actor);
      if (!spending?.open[event.data.reservation]) return;
      const { [event.data.reservation]: _released, ...rest } = spending.open;
      state.spending.set(event.actor, { ...spending, open: rest });
      return;
    }
    default: {
      const never: never = event;
      return never;
    }
  }
}

