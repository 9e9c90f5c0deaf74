import { invalidState } from '../../errors.js';

/** A report from a channel other than the one serving the order (the sandbox helpers are the built-in channel's). */
export function notTheChannel(order: 'payment' | 'payout', serving: string | null, reporting: string | null) {
  return invalidState(
    serving === null
      ? `this ${order} is served by the sandbox channel, not ${reporting}`
      : `this ${order} is served by the channel ${serving}${reporting === null ? '; the sandbox helpers do not apply to it' : ''}`,
  );
}
