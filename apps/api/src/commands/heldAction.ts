import type { ActionOutcome, ActionRequest } from '@svc/actions';
import type { OutboxRow } from '@svc/vault';
import type { Services } from '../services';

export type HeldRequest = ActionRequest & { holdKey: string };

export interface HeldActionSteps {
  /** Asked once the row is reserved: the decision may have changed since the command's first look. */
  recheck?(): Promise<void>;
  /** Another live action holds the request's hold: answer for it (its handout again) or throw. */
  whenHeld(holder: OutboxRow): Promise<ActionOutcome> | ActionOutcome;
}

/**
 * An action with a hold (one live payment per bounty, one sharing config per coin, one claim per set of fees):
 * reserved first, then looked at again or answered for the holder, and only then performed.
 */
export async function runHeldAction(services: Services, request: HeldRequest, steps: HeldActionSteps): Promise<ActionOutcome> {
  const reservation = await services.pipeline.reserve(request);
  switch (reservation.kind) {
    case 'finished':
      return reservation.outcome;
    case 'held':
      return steps.whenHeld(reservation.holder);
    case 'reserved':
      try {
        await steps.recheck?.();
      } catch (error) {
        await services.pipeline.release(reservation);
        throw error;
      }
      return services.pipeline.perform(reservation);
    default: {
      const never: never = reservation;
      return never;
    }
  }
}
