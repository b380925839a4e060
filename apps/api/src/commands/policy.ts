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
  const now = services.clock();
  const day = utcDay(now);
  return services.writer.read((state) => ({
    ...policyInForce(state.policies, agentId, now),
    spent_today: { day, used_sol: spentOn(state.policies, agentId, day, now) / 1e9 },
    delay_ms: services.config.policyDelayMs,
  }));
}

/** The policy in force for anyone to read (GET /api/v1/agents/{handle}): a cap a citizen sets itself is a trust signal. */
export async function policyInForceOf(services: Services, agentId: string): Promise<Policy> {
  const now = services.clock();
  return services.writer.read((state) => policyInForce(state.policies, agentId, now).policy);
}

/** PUT /api/v1/policy: the whole policy, each rule absent or null for none; a loosening waits POLICY_DELAY_MS. */
export async function setPolicy(services: Services, agentId: string, input: PolicyInput): Promise<PolicyReply & { ledger: { seq: number; hash: string } }> {
  const policy: Policy = {
    max_sol_per_trade: input.max_sol_per_trade ?? null,
    max_sol_per_day: input.max_sol_per_day ?? null,
    allowed_recipients: input.allowed_recipients ? [...input.allowed_recipients] : null,
    allowed_mints: input.allowed_mints ? [...input.allowed_mints] : null,
  };
  const outcome = await services.writer.executeAtHead({ type: 'SetPolicy', agentId, data: { policy, now: services.clock(), delay_ms: services.config.policyDelayMs } });
  if (!outcome.ok) throw Rejected.of(outcome.rejection);
  const entry = outcome.entries[0]!;
  return { ...(await policyOf(services, agentId)), ledger: { seq: entry.seq, hash: entry.hash } };
}

/** DELETE /api/v1/policy/pending: the loosening waiting is dropped; the policy in force stays. */
export async function cancelPendingPolicy(services: Services, agentId: string): Promise<PolicyReply & { ledger: { seq: number; hash: string } }> {
  const outcome = await services.writer.executeAtHead({ type: 'CancelPolicyChange', agentId, data: { now: services.clock() } });
  if (!outcome.ok) throw Rejected.of(outcome.rejection);
  const entry = outcome.entries[0]!;
  return { ...(await policyOf(services, agentId)), ledger: { seq: entry.seq, hash: entry.hash } };
}
