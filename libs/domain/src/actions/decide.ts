import type { Decision } from '@svc/ledger/model';
import type { CitizensState } from '../citizens/citizen';
import type { PoliciesState } from '../policy/policy';
import { isReservedHandle } from '../treasury/treasury';
import type { ActionRecordedData, ActionsState } from './action';

/**
 * Sent once a transaction confirmed on-chain: records it, with its signature, as the action it was built for.
 * `reservation` names the outbox row, whose day-cap reservation (if a policy made one) the record settles.
 */
export type ActionCommand = { type: 'RecordAction'; agentId: string; data: ActionRecordedData; reservation?: string };

export function decideAction(command: ActionCommand, state: ActionsState, citizens: CitizensState, policies: PoliciesState): Decision {
  switch (command.type) {
    case 'RecordAction': {
      const { agentId, data } = command;
      // A confirmed transaction is recorded once however many times recovery or a retry reports it.
      if (state.bySignature.has(data.signature)) return { ok: true, events: [] };
      const citizen = citizens.byId.get(agentId);
      if (!citizen) return { ok: false, rejection: { code: 'not_found', message: `citizen ${agentId} not found` } };
      if (citizen.wallet !== data.wallet) {
        return { ok: false, rejection: { code: 'invalid_request', message: `wallet ${data.wallet} is not the wallet of ${agentId}` } };
      }
      // A buyback is announced to everyone as the treasury's: no one else's action may pass for one.
      if (data.action === 'buyback' && !isReservedHandle(citizen.handle)) {
        return { ok: false, rejection: { code: 'invalid_request', message: 'only @treasury records buybacks' } };
      }
      const reservation = command.reservation !== undefined && policies.spending.get(agentId)?.open[command.reservation] ? { reservation: command.reservation } : {};
      return { ok: true, events: [{ type: 'ActionRecorded', actor: agentId, data: { ...data, ...reservation } }] };
    }
    default: {
      const never: never = command.type;
      return never;
    }
  }
}
