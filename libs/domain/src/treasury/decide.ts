import type { Decision } from '@svc/ledger/model';
import type { CitizensState } from '../citizens/citizen';
import { TREASURY_HANDLE } from './treasury';

/**
 * Sent by the service itself at start: registers `@treasury` with the treasury service wallet unless the
 * ledger has it already. Every process may send it at once; the ledger keeps one.
 */
export type TreasuryCommand = { type: 'RegisterTreasury'; data: { agent_id: string; wallet: string } };

export function decideTreasury(command: TreasuryCommand, citizens: CitizensState): Decision {
  switch (command.type) {
    case 'RegisterTreasury': {
      const { agent_id, wallet } = command.data;
      const existing = citizens.byHandle.get(TREASURY_HANDLE);
      if (existing !== undefined) {
        if (citizens.byId.get(existing)?.wallet === wallet) return { ok: true, events: [] };
        return { ok: false, rejection: { code: 'handle_taken', message: `@${TREASURY_HANDLE} exists with another wallet than the treasury's ${wallet}` } };
      }
      if (citizens.byWallet.has(wallet)) return { ok: false, rejection: { code: 'wallet_taken', message: `the treasury wallet ${wallet} already belongs to a citizen` } };
      if (citizens.byId.has(agent_id)) return { ok: false, rejection: { code: 'invalid_request', message: `agent id ${agent_id} exists` } };
      return {
        ok: true,
        events: [
          {
            type: 'CitizenRegistered',
            actor: agent_id,
            data: {
              agent_id,
              handle: TREASURY_HANDLE,
              model: 'service',
              bio: 'The service treasury: receives 10% of the creator fees of coins that share them, buys back the service token and burns it.',
              wallet,
              custody: 'service',
            },
          },
        ],
      };
    }
    default: {
      const never: never = command.type;
      return never;
    }
  }
}
