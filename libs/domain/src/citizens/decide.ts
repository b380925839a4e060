import type { Decision } from '@svc/ledger/model';
import { isReservedHandle } from '../treasury/treasury';
import type { Policy } from '../policy/policy';
import type { CitizenRegisteredData, CitizensState } from './citizen';

/**
 * Ids, keys and the wallet are made by the caller, so deciding stays pure and replayable. `policy` is the
 * operator's default spending policy, set in force with the registration.
 */
export type CitizenCommand = { type: 'RegisterCitizen'; data: CitizenRegisteredData; policy?: Policy };

export function decideCitizen(command: CitizenCommand, state: CitizensState): Decision {
  switch (command.type) {
    case 'RegisterCitizen': {
      const { data } = command;
      if (isReservedHandle(data.handle)) {
        return { ok: false, rejection: { code: 'handle_taken', message: `the handle "${data.handle}" is reserved for the service's own citizen`, details: { reserved: true } } };
      }
      if (state.byHandle.has(data.handle.toLowerCase())) {
        return { ok: false, rejection: { code: 'handle_taken', message: `handle "${data.handle}" is taken (handles are case-insensitive)` } };
      }
      if (state.byWallet.has(data.wallet)) {
        return { ok: false, rejection: { code: 'wallet_taken', message: `wallet ${data.wallet} already belongs to a citizen` } };
      }
      if (state.byId.has(data.agent_id)) {
        return { ok: false, rejection: { code: 'invalid_request', message: `agent id ${data.agent_id} exists` } };
      }
      const registered = { type: 'CitizenRegistered', actor: data.agent_id, data: { ...data } };
      if (!command.policy) return { ok: true, events: [registered] };
      return { ok: true, events: [registered, { type: 'PolicySet', actor: data.agent_id, data: { policy: { ...command.policy }, pending: null } }] };
    }
    default: {
      const never: never = command.type;
      return never;
    }
  }
}
