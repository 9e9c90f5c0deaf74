import { declareErrors } from '../../errors.js';

/** The channels module's failures (raised through `channelUnavailable` in src/errors.ts). */
export const channelErrors = declareErrors({
  /** The order's channel could not be reached; nothing was created or changed. */
  CHANNEL_UNAVAILABLE: {
    status: 503,
    message: 'the channel is unavailable; nothing was done, retry later',
    kind: 'api',
  },
});
