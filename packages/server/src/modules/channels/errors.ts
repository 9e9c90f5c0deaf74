import { declareErrors, DomainError } from '../../errors.js';

/** The channels module's failures. */
export const channelErrors = declareErrors({
  /** The order's channel could not be reached; nothing was created or changed. */
  CHANNEL_UNAVAILABLE: {
    status: 503,
    message: 'the channel is unavailable; nothing was done, retry later',
    kind: 'api',
  },
});

declare module '../../errors.js' {
  interface ErrorDeclarations {
    channels: typeof channelErrors;
  }
}

/** The order's channel could not be reached (payments and payouts raise it). */
export const channelUnavailable = (channel: string) =>
  new DomainError('CHANNEL_UNAVAILABLE', `the channel ${channel} is unavailable; nothing was done, retry later`);
