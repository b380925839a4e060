import { lamportsToSol } from '@svc/chain';
import type { Config } from '@svc/config';
import type { RequestOf, policyBody } from '@svc/contracts';
import { NO_POLICY, Rejected, policyInForce, spentOn, utcDay, type PendingPolicy, type Policy } from '@svc/domain';
import type { Services } from '../services';

export type PolicyInput = RequestOf<typeof policyBody>;

export type PolicyReply = {
  policy: Policy;
  pending: PendingPolicy | null;
  spent_today: { day: string; used_sol: number };
  delay_ms: number;
};

/** The operator's spending policy for a new citizen (DEFAULT_POLICY_*), or undefined when it sets none. */
export function defaultPolicy(config: Pick<Config, 'defaultPolicyMaxSolPerTrade' | 'defaultPolicyMaxSolPerDay'>): Policy | undefined {
  const { defaultPolicyMaxSolPerTrade: perTrade, defaultPolicyMaxSolPerDay: perDay } = config;
  if (perTrade === undefined && perDay === undefined) return undefined;
  return { ...NO_POLICY, max_sol_per_trade: perTrade ?? null, max_sol_per_day: perDay ?? null };
}

/** The policy in force at the ledger head on the service's clock, what waits, and what today's cap has counted. */
export async function policyOf(services: Services, agentId: string): Promise<PolicyReply> {
  // A change or a spend another API process recorded is part of the answer.
  await services.writer.sync();
  const now = services.clock();
  const day = utcDay(now);
  return services.writer.read((state) => ({
    ...policyInForce(state.policies, agentId, now),
    spent_today: { day, used_sol: lamportsToSol(BigInt(spentOn(state.policies, agentId, day, now))) },
    delay_ms: services.config.policyDelayMs,
  }));
}

/** The policy in force for anyone to read (GET /api/v1/agents/{handle}): a cap a citizen sets itself is a trust signal. */
export async function policyInForceOf(services: Services, agentId: string): Promise<Policy> {
  const now = services.clock();
  return services.writer.read((state) => policyInForce(state.policies, agentId, now).policy);
}

type PolicyChanged = PolicyReply & { ledger: { seq: number; hash: string } };

/**
 * PUT /api/v1/policy: the whole policy, each rule absent or null for none, a loosening waiting POLICY_DELAY_MS; or
 * `cancel_pending` alone, which drops the loosening waiting. Cancelling is a field of the one policy route, not a
 * route of its own, because the pending change is part of the policy, and a third tool would not fit in tools/list.
 */
export async function changePolicy(services: Services, agentId: string, input: PolicyInput): Promise<PolicyChanged> {
  if (!input.cancel_pending) return setPolicy(services, agentId, input);
  const rule = Object.keys(input).find((field) => field !== 'cancel_pending');
  if (rule) throw new Rejected('invalid_request', `cancel_pending goes alone: send the policy (with ${rule}) in a PUT of its own`, { field: rule });
  return cancelPendingPolicy(services, agentId);
}

async function setPolicy(services: Services, agentId: string, input: PolicyInput): Promise<PolicyChanged> {
  const unique = (list: readonly string[] | null | undefined) => (list ? [...new Set(list)] : null);
  const policy: Policy = {
    max_sol_per_trade: input.max_sol_per_trade ?? null,
    max_sol_per_day: input.max_sol_per_day ?? null,
    allowed_recipients: unique(input.allowed_recipients),
    allowed_mints: unique(input.allowed_mints),
  };
  const outcome = await services.writer.executeAtHead({ type: 'SetPolicy', agentId, data: { policy, now: services.clock(), delay_ms: services.config.policyDelayMs } });
  if (!outcome.ok) throw Rejected.of(outcome.rejection);
  const entry = outcome.entries[0]!;
  return { ...(await policyOf(services, agentId)), ledger: { seq: entry.seq, hash: entry.hash } };
}

/** The loosening waiting is dropped; the policy in force stays. */
async function cancelPendingPolicy(services: Services, agentId: string): Promise<PolicyChanged> {
  // The loosening may have been recorded by another API process: "nothing pending" must not come from a stale view,
  // or the change it was meant to stop takes effect.
  await services.writer.sync();
  const outcome = await services.writer.executeAtHead({ type: 'CancelPolicyChange', agentId, data: { now: services.clock() } });
  if (!outcome.ok) throw Rejected.of(outcome.rejection);
  const entry = outcome.entries[0]!;
  return { ...(await policyOf(services, agentId)), ledger: { seq: entry.seq, hash: entry.hash } };
}
