import { WEBHOOK_KEYS_SAMPLES } from '../../openapi/code-samples.js';
import { type PathItem, ref } from '../../openapi/common.js';

/** The published webhook keys (routes.ts), documented beside the route that serves them. */
export const platformKeyPaths: Record<string, PathItem> = {
  '/.well-known/paygate/webhook-keys': {
    get: {
      summary: 'Published platform webhook keys',
      description:
        'Unauthenticated. The Ed25519 public keys a merchant may see webhook signatures from, by keyid: the active one and any still enabled during a rotation. Not wrapped in msg/data.',
      tags: ['Events'],
      security: [],
      'x-codeSamples': WEBHOOK_KEYS_SAMPLES,
      responses: {
        '200': {
          description: 'The keys',
          content: {
            'application/json': {
              schema: ref('WebhookKeys'),
            },
          },
        },
        '431': { description: 'REQUEST_HEADER_FIELDS_TOO_LARGE: the request target and headers exceed the limit' },
      },
    },
  },
};
