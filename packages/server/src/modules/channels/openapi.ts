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
  '/channels/{name}/notifications/pix': {
    post: {
      summary: 'Receive an API Pix callback (called by the Pix provider of a pix-api channel, not by merchants)',
      description:
        'The callback the API Pix provider makes to the webhook the platform registers at start (`PUT {baseUrl}/webhook/{pixKey}` with `webhookUrl` `<PAYGATE_PUBLIC_URL>/channels/<name>/notifications`). It carries no signature: the API Pix protects it with mTLS, which a deployment terminates at its edge (docs/channels.md). It is only a hint: the body is recorded raw (once per distinct body) and answered 200; then, for each `txid` that names an open payment of this platform on that channel, the platform asks `GET {baseUrl}/cob/{txid}` (at most once at a time per txid) and settles from that answer alone. A forged or replayed callback changes nothing, and ids of no open payment cost no call to the provider.',
      tags: ['Channels'],
      // Authenticated at the deployment's edge (mTLS with the provider's certificate), not by a
      // merchant credential; and only a hint, confirmed by the platform's own GET /cob.
      security: [],
      parameters: [
        {
          name: 'name',
          in: 'path',
          required: true,
          description: 'The channel name (PAYGATE_CHANNELS), of kind pix-api',
          schema: { type: 'string' },
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['pix'],
              description: 'The API Pix callback body (requestBodies.WebhookPixBody): the Pix received',
              properties: {
                pix: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['endToEndId', 'valor', 'horario'],
                    properties: {
                      endToEndId: { type: 'string' },
                      txid: { type: 'string' },
                      valor: { type: 'string' },
                      horario: { type: 'string', format: 'date-time' },
                    },
                  },
                },
              },
            },
          },
        },
      },
      responses: {
        '200': {
          description: 'Recorded (outcome `received`); the charges it names are asked about next',
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
        '400': errorResponse('VALIDATION_FAILED: not an API Pix callback (recorded, nothing asked)'),
        '404': errorResponse('NOT_FOUND: no such channel of kind pix-api'),
      },
    },
  },
};
