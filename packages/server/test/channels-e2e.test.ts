/**
 * Channels end to end (issue 13): a running `paygate-psp` process and a platform in production
 * mode (PAYGATE_ENV=production, PAYGATE_MASTER_KEY, PAYGATE_WEBHOOK_ALLOW_PRIVATE=true for the
 * loopback receiver) with a PAYGATE_CHANNELS file, on PGlite and PostgreSQL.
 *
 * TODO (issue 13): the simulator (packages/psp-simulator, its own tests) and the connector layer
 * (channels.test.ts, against a fake provider in the test) are built; what is missing is these cases
 * run through a spawned `paygate-psp`. The polling step and `paygate reconcile` they exercise are
 * tested on their own in channel-polling.test.ts and channel-reconcile.test.ts.
 */
import { describe, it } from 'node:test';
import { databases } from './harness.js';

const WAITING = 'not written yet: the end-to-end run through a spawned paygate-psp is open work of issue 13';

for (const database of databases()) {
  describe(`channels end to end (${database})`, () => {
    it.todo(`a PIX payment reaches SUCCEEDED with its payer and one webhook: ${WAITING}`);
    it.todo(`a declined payment ends FAILED: ${WAITING}`);
    it.todo(`a payout reaches SUCCEEDED, then is returned to REFUNDED and credited once: ${WAITING}`);
    it.todo(`duplicate notifications give one event and one posting: ${WAITING}`);
    it.todo(`dropped notifications are recovered by polling (short PAYGATE_CHANNEL_POLL_AFTER): ${WAITING}`);
    it.todo(`notifications released in reverse order end in the right final state: ${WAITING}`);
    it.todo(`forged, tampered and replayed notifications are 401 and change nothing: ${WAITING}`);
    it.todo(`the sandbox helpers are absent in production: ${WAITING}`);
    it.todo(`the simulator SIGKILLed mid-notification and restarted: nothing lost, nothing applied twice: ${WAITING}`);
    it.todo(`paygate reconcile on the simulator's settlement file finds each injected mismatch: ${WAITING}`);
    it.todo(`notifications applied per second (printed): ${WAITING}`);
  });
}
