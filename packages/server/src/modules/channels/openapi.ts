import { errorResponse, type PathItem, ref } from '../../openapi/common.js';

const pspHeader = (name: string, description: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
});

export const channelPaths: Record<string, PathItem> = {
  '/channels/{name}/notifications': {
    post: {
      summary: 'Receive a channel notification (called by the channel, not by merchants)',
      description:
        "Outside the merchant API's authentication: each channel signs its notifications with its own secret (kind psp-sim: HMAC-SHA256 over `<timestamp>\\n<nonce>\\n<METHOD>\\n<path>\\n` + the exact body bytes, compared in constant time; a timestamp more than 300 s away is stale; a nonce is accepted once across all instances). A refused notification is 401 and changes nothing. An accepted one is recorded raw (operators: `paygate channels notifications --channel NAME`) and applied through the same state machine as the sandbox helpers, once per channel event id: repeats and reordering are harmless, a final order never moves again, a return is credited once. A notification about an unknown order is kept for investigation and still answered 200, so the channel stops retrying.",
      tags: ['Channels'],
      // Authenticated by the channel's own HMAC (PSP-Signature), not by a merchant credential.
      security: [],
      parameters: [
        {
          name: 'name',
          in: 'path',
          required: true,
          description: 'The channel name (PAYGATE_CHANNELS)',
          schema: { type: 'string' },
        },
        pspHeader('PSP-Timestamp', 'Unix seconds'),
        pspHeader('PSP-Nonce', 'UUID v4, used once'),
        pspHeader('PSP-Signature', '`v1=` and the lowercase hex HMAC-SHA256'),
      ],
      requestBody: { required: true, content: { 'application/json': { schema: ref('ChannelNotification') } } },
      responses: {
        '200': {
          description: 'Recorded (and applied, or kept for investigation)',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['msg', 'data'],
                properties: {
                  msg: { const: 'SUCCESS' },
                  data: ref('NotificationOutcome'),
                },
              },
            },
          },
        },
        '400': errorResponse(
          'VALIDATION_FAILED: authenticated, but not a notification the channel’s connector understands',
        ),
        '401': {
          description: 'UNAUTHORIZED: forged, tampered, stale or replayed',
          content: { 'application/json': { schema: ref('Unauthorized') } },
        },
        '404': errorResponse('NOT_FOUND: no such channel'),
      },
    },
  },
};
