import type { Decision, Rejection } from '@svc/ledger/model';
import { utcDay } from '../caps/dailyCaps';
import { NO_POLICY, policyInForce, spentOn, type PendingPolicy, type PoliciesState, type Policy } from './policy';

const LAMPORTS_PER_SOL = 1e9;
const toLamports = (sol: number) => Math.round(sol * LAMPORTS_PER_SOL);
const toSol = (lamports: number) => lamports / LAMPORTS_PER_SOL;

/**
 * What an action would spend, checked against the policy in force at `now` (the caller's clock, so decisions
 * replay the same). `reserve` holds the amount against the day cap until the action is recorded or released;
 * without it (a transaction handed out to sign) the check alone is made.
 */
export interface SpendRequest {
  reservation: string;
  action: string;
  /** SOL the action moves out of the wallet, in lamports (a swap's input valued in SOL). */
  lamports: number;
  /** The network fees it may pay besides, counted against the day cap only. */
  fee_lamports: number;
  mint: string | null;
  /** The wallet paid and, when it is a citizen's, its handle: either may be on the allowed list. */
  recipient: { wallet: string; handle: string | null } | null;
  reserve: boolean;
  now: number;
  until: number;
}

export type PolicyCommand =
  | { type: 'SetPolicy'; agentId: string; data: { policy: Policy; now: number; delay_ms: number } }
  | { type: 'CancelPolicyChange'; agentId: string; data: { now: number } }
  | { type: 'ReserveSpend'; agentId: string; data: SpendRequest }
  | { type: 'ReleaseSpend'; agentId: string; data: { reservation: string } };

const reject = (rejection: Rejection): Decision => ({ ok: false, rejection });

function refused(limit: string, message: string, details: Record<string, unknown>): Rejection {
  return { code: 'policy_limit', message: `your spending policy refuses this: ${message}`, details: { limit, ...details } };
}

function tighterCap(next: number | null, now: number | null): boolean {
  return now === null || (next !== null && next <= now);
}

function tighterList(next: string[] | null, now: string[] | null): boolean {
  return now === null || (next !== null && next.every((item) => now.includes(item)));
}

/**
 * Each rule of `next` that tightens (or keeps) the one in force applies at once; the rest wait. A rule that
 * loosens is held back whole, so a talked-into raise cannot be spent before the owner sees it.
 */
export function splitChange(current: Policy, next: Policy): { atOnce: Policy; loosens: boolean } {
  const atOnce: Policy = {
    max_sol_per_trade: tighterCap(next.max_sol_per_trade, current.max_sol_per_trade) ? next.max_sol_per_trade : current.max_sol_per_trade,
    max_sol_per_day: tighterCap(next.max_sol_per_day, current.max_sol_per_day) ? next.max_sol_per_day : current.max_sol_per_day,
    allowed_recipients: tighterList(next.allowed_recipients, current.allowed_recipients) ? next.allowed_recipients : current.allowed_recipients,
    allowed_mints: tighterList(next.allowed_mints, current.allowed_mints) ? next.allowed_mints : current.allowed_mints,
  };
  const loosens = (Object.keys(next) as Array<keyof Policy>).some((rule) => JSON.stringify(atOnce[rule]) !== JSON.stringify(next[rule]));
  return { atOnce, loosens };
}

function isRecipientAllowed(allowed: string[], recipient: { wallet: string; handle: string | null }): boolean {
  const handle = recipient.handle?.toLowerCase();
  return allowed.some((entry) => entry === recipient.wallet || (handle !== undefined && entry.replace(/^@/, '').toLowerCase() === handle));
}

/** The refusal of what `request` would spend under `policy`, else undefined. */
export function policyRefusal(policy: Policy, request: SpendRequest, usedToday: number): Rejection | undefined {
  if (request.mint !== null && policy.allowed_mints !== null && !policy.allowed_mints.includes(request.mint)) {
    return refused('allowed_mints', `${request.mint} is not among your allowed_mints`, { mint: request.mint, allowed: policy.allowed_mints });
  }
  if (request.recipient !== null && policy.allowed_recipients !== null && !isRecipientAllowed(policy.allowed_recipients, request.recipient)) {
    const to = request.recipient.handle ?? request.recipient.wallet;
    return refused('allowed_recipients', `${to} is not among your allowed_recipients`, { recipient: to, allowed: policy.allowed_recipients });
  }
  const cap = policy.max_sol_per_trade;
  if (cap !== null && request.lamports > toLamports(cap)) {
    return refused('max_sol_per_trade', `${toSol(request.lamports)} SOL is more than your max_sol_per_trade of ${cap} SOL`, { used: toSol(request.lamports), cap });
  }
  const dayCap = policy.max_sol_per_day;
  const wanted = request.lamports + request.fee_lamports;
  if (dayCap !== null && usedToday + wanted > toLamports(dayCap)) {
    const day = utcDay(request.now);
    return refused(
      'max_sol_per_day',
      `${toSol(usedToday)} SOL of your max_sol_per_day of ${dayCap} SOL is spent or reserved on ${day}, and this needs ${toSol(wanted)} SOL with its fees; it resets at 00:00 UTC`,
      { used: toSol(usedToday), cap: dayCap, day },
    );
  }
  return undefined;
}

export function decidePolicy(command: PolicyCommand, state: PoliciesState): Decision {
  switch (command.type) {
    case 'SetPolicy': {
      const { agentId, data } = command;
      const { policy: current } = policyInForce(state, agentId, data.now);
      const { atOnce, loosens } = splitChange(current, data.policy);
      const pending: PendingPolicy | null = loosens ? { policy: data.policy, effective_at: data.now + data.delay_ms } : null;
      return { ok: true, events: [{ type: 'PolicySet', actor: agentId, data: { policy: atOnce, pending } }] };
    }
    case 'CancelPolicyChange': {
      const { agentId, data } = command;
      const { pending } = policyInForce(state, agentId, data.now);
      if (!pending) return reject({ code: 'invalid_request', message: 'no policy change is pending', details: { field: 'cancel_pending' } });
      return { ok: true, events: [{ type: 'PolicyChangeCancelled', actor: agentId, data: { ...pending } }] };
    }
    case 'ReserveSpend': {
      const { agentId, data } = command;
      const { policy } = policyInForce(state, agentId, data.now);
      if (policy === NO_POLICY) return { ok: true, events: [] };
      const day = utcDay(data.now);
      const refusal = policyRefusal(policy, data, spentOn(state, agentId, day, data.now));
      if (refusal) return reject(refusal);
      if (!data.reserve || policy.max_sol_per_day === null) return { ok: true, events: [] };
      const lamports = data.lamports + data.fee_lamports;
      return { ok: true, events: [{ type: 'SpendReserved', actor: agentId, data: { reservation: data.reservation, action: data.action, lamports, day, until: data.until } }] };
    }
    case 'ReleaseSpend': {
      const { agentId, data } = command;
      if (!state.spending.get(agentId)?.open[data.reservation]) return { ok: true, events: [] };
      return { ok: true, events: [{ type: 'SpendReleased', actor: agentId, data: { reservation: data.reservation } }] };
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}
