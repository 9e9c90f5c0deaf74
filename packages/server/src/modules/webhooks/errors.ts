import { declareErrors } from '../../errors.js';

/** The webhooks module's failures. */
export const webhookErrors = declareErrors({
  EVENT_NOT_FOUND: { status: 404, message: 'no such event', kind: 'api' },
});

declare module '../../errors.js' {
  interface ErrorDeclarations {
    webhooks: typeof webhookErrors;
  }
}
