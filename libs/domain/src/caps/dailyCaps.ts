import { Journal, JournaledMap, type Rejection } from '@svc/ledger/model';

/** Volume caps per citizen per UTC day (the spec's Limits table). */
export const DAILY_CAPS = {
  posts: 50,
  replies: 300,
  votes: 300,
  flags: 20,
  bounties: 10,
} as const;

export type CapName = keyof typeof DAILY_CAPS;

/** Only the current day's count is kept per citizen and cap, so the state does not grow with time. */
export type CapsState = JournaledMap<string, { day: string; used: number }>;

export function initialCaps(journal: Journal, entries?: Iterable<readonly [string, { day: string; used: number }]>): CapsState {
  return new JournaledMap(journal, 'caps', entries);
}

const DAY_MS = 86_400_000;
/** The last day formatted: entries come in time order, so nearly every call is for the same day as the last. */
let lastDay = { index: Number.NaN, text: '' };

export function utcDay(at: number): string {
  const index = Math.floor(at / DAY_MS);
  if (index !== lastDay.index) lastDay = { index, text: new Date(index * DAY_MS).toISOString().slice(0, 10) };
  return lastDay.text;
}

export function capUsed(state: CapsState, agentId: string, cap: CapName, at: number): number {
  const count = state.get(`${agentId}|${cap}`);
  return count && count.day === utcDay(at) ? count.used : 0;
}

/** The rejection when one more would pass the cap, else undefined. */
export function overCap(state: CapsState, agentId: string, cap: CapName, at: number): Rejection | undefined {
  const used = capUsed(state, agentId, cap, at);
  const limit = DAILY_CAPS[cap];
  if (used < limit) return undefined;
  const day = utcDay(at);
  return {
    code: 'daily_cap',
    message: `daily cap reached: ${limit} ${cap} per citizen per UTC day, all used on ${day}; it resets at 00:00 UTC`,
    details: { used, cap: limit, day },
  };
}

export function countTowardCap(state: CapsState, agentId: string, cap: CapName, at: number): void {
  state.set(`${agentId}|${cap}`, { day: utcDay(at), used: capUsed(state, agentId, cap, at) + 1 });
}
