/**
 * Merges `examples.ts` into the document: the operationId, parameter examples, the request
 * example (for a sealed write: the envelope, and the plaintext as `x-plaintext-examples` and shown
 * in the body's description), a response example for every documented answer, and a link from
 * every signed operation to the signing recipe (shown once, in the introduction). Module
 * descriptions (`modules/<noun>/openapi.ts`) are left as they are; the result is new objects.
 */
import { merchantCodeSamples } from './code-samples.js';
import type { PathItem, Schema } from './common.js';
import {
  COMMON_ERROR_EXAMPLES,
  type Example,
  envelopeOf,
  OPERATION_EXAMPLES,
  type OperationExamples,
  WEBHOOK_EXAMPLES,
} from './examples.js';

/** Where the reference (Scalar) renders the recipe's heading. */
export const SIGNING_RECIPE_LINK = '#description/signing-requests';

const SIGNED_NOTE = `Signed request: see [Signing requests](${SIGNING_RECIPE_LINK}).`;

type Operation = Record<string, unknown> & {
  description?: string;
  parameters?: Schema[];
  requestBody?: Record<string, unknown> & { description?: string; content?: Record<string, Schema> };
  responses?: Record<string, { content?: Record<string, Schema> }>;
  security?: unknown[];
};

const fail = (message: string): never => {
  throw new Error(`openapi examples: ${message}`);
};

const withMediaExamples = (
  content: Record<string, Schema> | undefined,
  examples: Record<string, Example>,
  where: string,
) => {
  const media = content?.['application/json'] ?? fail(`${where} has no application/json content`);
  return { ...content, 'application/json': { ...media, examples } };
};

function operationWithExamples(operationId: string, operation: Operation, examples: OperationExamples): Operation {
  if (operation.operationId !== undefined && operation.operationId !== operationId) {
    fail(`${examples.operation} is ${String(operation.operationId)}, not ${operationId}`);
  }
  const merged: Operation = { operationId, ...operation };

  const named = new Set(Object.keys(examples.parameters ?? {}));
  if (operation.parameters !== undefined)
    merged.parameters = operation.parameters.map((parameter) => {
      const name = parameter.name as string;
      if (!named.delete(name) || parameter.in === 'header') return parameter;
      return { ...parameter, example: examples.parameters?.[name] };
    });
  if (named.size > 0) fail(`${examples.operation} has no parameter ${[...named].join(', ')}`);

  const body = operation.requestBody;
  if ((body === undefined) !== (examples.request === undefined)) {
    fail(`${examples.operation}: a request example exactly when there is a request body`);
  }
  if (body !== undefined) {
    const plaintext = body['x-plaintext'] as Schema | undefined;
    if (plaintext !== undefined) {
      if (examples.ciphertext === undefined) fail(`${examples.operation}: a sealed write needs the ciphertext`);
      merged.requestBody = {
        ...body,
        description: `${body.description ?? ''}\n\nSealed inside, for example:\n\n\`\`\`json\n${JSON.stringify(examples.request, null, 2)}\n\`\`\``,
        content: withMediaExamples(
          body.content,
          {
            sealed: {
              summary: 'The envelope sealing the plaintext shown above',
              value: envelopeOf(examples.ciphertext ?? ''),
            },
          },
          examples.operation,
        ),
        // Beside x-plaintext, which stays a bare $ref to its component.
        'x-plaintext-examples': [examples.request],
      };
    } else {
      merged.requestBody = {
        ...body,
        content: withMediaExamples(
          body.content,
          { example: { summary: 'A request', value: examples.request } },
          examples.operation,
        ),
      };
    }
  }

  merged.responses = Object.fromEntries(
    Object.entries(operation.responses ?? {}).map(([status, response]) => {
      if (response.content === undefined) return [status, response];
      const shown = examples.responses[status] ?? COMMON_ERROR_EXAMPLES[status];
      if (shown === undefined) return fail(`${examples.operation} has no example for its ${status} answer`);
      return [
        status,
        { ...response, content: withMediaExamples(response.content, { ...shown }, `${examples.operation} ${status}`) },
      ];
    }),
  );
  const unused = Object.keys(examples.responses).filter((status) => operation.responses?.[status] === undefined);
  if (unused.length > 0) fail(`${examples.operation} documents no ${unused.join(', ')} answer`);

  if (operation.security?.length) {
    merged.description = operation.description ? `${operation.description}\n\n${SIGNED_NOTE}` : SIGNED_NOTE;
    const [method, path] = examples.operation.split(' ') as ['GET' | 'POST', string];
    merged['x-codeSamples'] = merchantCodeSamples(operationId, method, path, examples);
  }
  return merged;
}

/** The paths and webhooks with their examples; every operation must have an entry in examples.ts. */
export function withExamples(
  paths: Record<string, PathItem>,
  webhooks: Record<string, PathItem>,
): { paths: Record<string, PathItem>; webhooks: Record<string, PathItem> } {
  const byOperation = new Map(Object.entries(OPERATION_EXAMPLES).map(([id, e]) => [e.operation, [id, e] as const]));
  const mergedPaths = Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([method, operation]) => {
          const key = `${method.toUpperCase()} ${path}`;
          const entry = byOperation.get(key) ?? fail(`${key} has no entry in examples.ts`);
          byOperation.delete(key);
          return [method, operationWithExamples(entry[0], operation as Operation, entry[1])];
        }),
      ),
    ]),
  );
  if (byOperation.size > 0)
    fail(`examples.ts names operations the document lacks: ${[...byOperation.keys()].join(', ')}`);

  const mergedWebhooks = Object.fromEntries(
    Object.entries(webhooks).map(([name, item]) => {
      const post = item.post as Operation;
      const examples = WEBHOOK_EXAMPLES[name] ?? fail(`webhook ${name} has no examples`);
      const body = post.requestBody ?? fail(`webhook ${name} has no body`);
      return [
        name,
        {
          ...item,
          post: {
            ...post,
            operationId: name,
            requestBody: { ...body, content: withMediaExamples(body.content, { ...examples }, name) },
          },
        },
      ];
    }),
  );
  return { paths: mergedPaths, webhooks: mergedWebhooks };
}
