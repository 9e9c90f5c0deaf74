import type { ReceiverCheck, ReceiverCheckCase } from '@paygate/wire';
import { createHash, randomUUID } from 'node:crypto';
import {
  buildSignatureBase,
  contentDigest,
  generateSigningKey,
  JSON_CONTENT_TYPE,
  type SigningKey,
  serializeSignature,
  serializeSignatureInput,
  sign,
  signWebhook,
  WEBHOOK_COMPONENTS,
  WEBHOOK_LABEL,
  webhookTarget,
} from '@paygate/protocol';
import { newEventId } from '../../ids.js';
import type { Destination } from '../../http/ssrf.js';
import { type SendOptions, type SendResult, send } from './sender.js';

/** One request a case sends. */
interface Shot {
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/** A case: its requests, sent in order (the last one's answer is judged, earlier ones must be accepted). */
interface Case {
  readonly name: string;
  readonly description: string;
  readonly expected: 'accept' | 'refuse';
  readonly shots: () => Shot[];
}

/** The key the platform signs real deliveries with. */
export interface CheckSigner {
  readonly keyid: string;
  readonly key: SigningKey;
}

/** How much of each answer the result quotes. */
const ANSWER_BYTES = 200;

/**
 * A realistic payment.succeeded body, each case its own eventId (so a receiver deduplicating by
 * eventId judges every case afresh) and an order number no real order has (the date 00000000).
 */
function eventBody(now: number): { eventId: string; body: Buffer } {
  const eventId = newEventId(now);
  const event = {
    eventId,
    orderType: 'PAYMENT',
    orderNo: `P00000000${String(now % 1e10).padStart(10, '0')}`,
    merchantOrderNo: `check-receiver-${randomUUID().slice(0, 8)}`,
    currency: 'BRL',
    amount: '10.00',
    status: 'SUCCEEDED',
    paidAmount: '10.00',
  };
  return { eventId, body: Buffer.from(JSON.stringify(event)) };
}

/**
 * The cases. The valid one is signed exactly as a delivery (`signWebhook`, the platform's
 * webhook key, the normalized URL); every other one is that, altered in the one way it is about.
 * "lifetime over 300 s" cannot come out of `signWebhook`, which refuses it: it is signed with the
 * same primitives (signature base, Signature-Input, Ed25519) and a longer `expires`.
 */
function cases(url: string, signer: CheckSigner, nowMs: () => number): Case[] {
  const now = () => Math.floor(nowMs() / 1000);
  const signed = (options: { keyid?: string; key?: SigningKey; created?: number; headerEventId?: string } = {}) => {
    const { eventId, body } = eventBody(nowMs());
    const { headers } = signWebhook(
      { url, body, eventId: options.headerEventId ?? eventId },
      {
        keyid: options.keyid ?? signer.keyid,
        key: options.key ?? signer.key,
        created: options.created ?? now(),
        nonce: randomUUID(),
      },
    );
    return { headers, body };
  };
  const without = (shot: Shot, ...names: string[]): Shot => ({
    body: shot.body,
    headers: Object.fromEntries(Object.entries(shot.headers).filter(([name]) => !names.includes(name))),
  });
  return [
    { name: 'valid', description: 'a delivery as the platform signs it', expected: 'accept', shots: () => [signed()] },
    {
      name: 'bad-content-digest',
      description: 'Content-Digest of other bytes',
      expected: 'refuse',
      shots: () => {
        const shot = signed();
        const other = createHash('sha256').update('other bytes').digest('base64');
        return [{ ...shot, headers: { ...shot.headers, 'content-digest': `sha-256=:${other}:` } }];
      },
    },
    {
      name: 'body-changed',
      description: 'body changed after signing (amount), headers as signed',
      expected: 'refuse',
      shots: () => {
        const shot = signed();
        return [{ ...shot, body: Buffer.from(shot.body.toString('utf8').replaceAll('"10.00"', '"99.00"')) }];
      },
    },
    {
      name: 'bad-signature',
      description: `keyid ${signer.keyid} but signed with another private key`,
      expected: 'refuse',
      shots: () => [signed({ key: generateSigningKey() })],
    },
    {
      name: 'unknown-keyid',
      description: 'a keyid no platform key has',
      expected: 'refuse',
      shots: () => [signed({ keyid: `wk_test_unknown_${randomUUID().slice(0, 8)}`, key: generateSigningKey() })],
    },
    {
      name: 'expired',
      description: 'expires 100 s in the past',
      expected: 'refuse',
      shots: () => [signed({ created: now() - 400 })],
    },
    {
      name: 'created-in-future',
      description: 'created 600 s in the future',
      expected: 'refuse',
      shots: () => [signed({ created: now() + 600 })],
    },
    {
      name: 'lifetime-over-300s',
      description: 'expires 900 s after created',
      expected: 'refuse',
      shots: () => {
        const { eventId, body } = eventBody(nowMs());
        const params = {
          label: WEBHOOK_LABEL,
          components: WEBHOOK_COMPONENTS,
          created: now(),
          expires: now() + 900,
          nonce: randomUUID(),
          keyid: signer.keyid,
        };
        const headers: Record<string, string> = {
          'content-type': JSON_CONTENT_TYPE,
          'content-digest': contentDigest(body),
          'webhook-event-id': eventId,
        };
        const base = buildSignatureBase({ method: 'POST', ...webhookTarget(url), headers }, params);
        if (!base.ok) throw new Error(`cannot sign: missing ${base.error.component}`);
        headers['signature-input'] = serializeSignatureInput(params);
        headers.signature = serializeSignature(WEBHOOK_LABEL, sign(base.value, signer.key));
        return [{ headers, body }];
      },
    },
    {
      name: 'replayed-nonce',
      description: 'the same valid request twice: the first accepted, the second refused',
      expected: 'refuse',
      shots: () => {
        const shot = signed();
        return [shot, shot];
      },
    },
    {
      name: 'event-id-mismatch',
      description: "Webhook-Event-Id (signed) is not the body's eventId",
      expected: 'refuse',
      shots: () => [signed({ headerEventId: newEventId(nowMs()) })],
    },
    {
      name: 're-serialized-body',
      description: 'same JSON, other bytes (pretty-printed), original digest and signature',
      expected: 'refuse',
      shots: () => {
        const shot = signed();
        return [{ ...shot, body: Buffer.from(JSON.stringify(JSON.parse(shot.body.toString('utf8')), null, 2)) }];
      },
    },
    {
      name: 'missing-signature',
      description: 'no Signature header',
      expected: 'refuse',
      shots: () => [without(signed(), 'signature')],
    },
    {
      name: 'missing-signature-input',
      description: 'no Signature-Input header',
      expected: 'refuse',
      shots: () => [without(signed(), 'signature-input')],
    },
    {
      name: 'missing-signature-headers',
      description: 'neither Signature nor Signature-Input',
      expected: 'refuse',
      shots: () => [without(signed(), 'signature', 'signature-input')],
    },
  ];
}

const NOT_SENT = 'not sent';
const observedOf = (result: SendResult) =>
  result.statusCode !== undefined && result.error === undefined
    ? String(result.statusCode)
    : `no answer: ${result.error}`;
const accepted = (observed: string) => /^2\d\d$/.test(observed);
const refused = (observed: string) => /^\d{3}$/.test(observed) && !accepted(observed);

/**
 * Fires every case at the receiver in turn and judges each by the answer's status: 2xx is
 * accepted, any other status refused, no answer neither. When the valid case gets no answer at
 * all, the rest are not sent (the receiver is not there; each would wait out its timeout).
 */
export async function checkReceiver(
  destination: Destination,
  signer: CheckSigner,
  options: SendOptions,
): Promise<ReceiverCheck> {
  const url = destination.url.href;
  const results: ReceiverCheckCase[] = [];
  let reachable = true;
  for (const one of cases(url, signer, options.now)) {
    const observed: string[] = [];
    let answer: string | null = null;
    for (const shot of one.shots()) {
      if (!reachable) {
        observed.push(NOT_SENT);
        break;
      }
      const result = await send(destination, shot.headers, shot.body, options);
      observed.push(observedOf(result));
      answer = result.excerpt === undefined ? null : result.excerpt.slice(0, ANSWER_BYTES);
    }
    const last = observed.at(-1) as string;
    const earlierAccepted = observed.slice(0, -1).every(accepted);
    const pass = earlierAccepted && (one.expected === 'accept' ? accepted(last) : refused(last));
    if (one.name === 'valid' && !/^\d{3}$/.test(last)) reachable = false;
    results.push({ name: one.name, description: one.description, expected: one.expected, observed, answer, pass });
  }
  return { url, keyid: signer.keyid, passed: results.every((r) => r.pass), cases: results };
}
