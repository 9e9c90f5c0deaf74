import { readFileSync } from 'node:fs';
import { collectHeaders, type HeaderPair, parseSignatureInput, WEBHOOK_PROFILE } from '@paygate/protocol';
import { WebhookVerificationError } from '../errors.js';
import type { WebhookEvent } from '../events.js';
import { type IncomingWebhook, WebhookVerifier } from '../webhook.js';
import { CliError, type ConfigFlags, webhookKeys } from './config.js';

/** A captured request head: request line (when present) and header lines. */
export interface CapturedHead {
  readonly method?: string;
  readonly target?: string;
  readonly headers: HeaderPair[];
}

const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/\d(\.\d)?$/;

/**
 * Parses captured headers: `Name: value` lines (optionally after a `POST /path HTTP/1.1` request
 * line, as `listen --save` writes them, ending at the first empty line), or a JSON object of
 * name → value.
 */
export function parseCapturedHead(text: string): CapturedHead {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    let object: unknown;
    try {
      object = JSON.parse(trimmed);
    } catch {
      throw new CliError('the headers file looks like JSON but does not parse');
    }
    const headers: HeaderPair[] = [];
    for (const [name, value] of Object.entries(object as Record<string, unknown>)) {
      for (const one of Array.isArray(value) ? value : [value]) {
        if (typeof one !== 'string') throw new CliError(`header ${name} in the JSON headers file is not a string`);
        headers.push([name, one]);
      }
    }
    return { headers };
  }
  const head: { method?: string; target?: string; headers: HeaderPair[] } = { headers: [] };
  const lines = text.split(/\r?\n/);
  for (const [i, line] of lines.entries()) {
    if (line === '') {
      if (head.headers.length > 0 || head.target) break;
      continue;
    }
    const request = REQUEST_LINE.exec(line);
    if (i === 0 && request) {
      head.method = request[1] as string;
      head.target = request[2] as string;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw new CliError(`line ${i + 1} of the headers file is not "Name: value": ${line}`);
    head.headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return head;
}

/** A one-line summary of an event. */
export function describeEvent(event: WebhookEvent): string {
  const money = `${event.currency} ${event.amount}`;
  return `${event.orderType} ${event.status} ${event.eventId}: order ${event.orderNo} (${event.merchantOrderNo}), ${money}`;
}

/** Prints a refusal with its hint and signature base. */
export function describeFailure(error: WebhookVerificationError): string {
  const lines = [`refused at the ${error.check} check: ${error.reason}`, error.hint];
  if (error.signatureBase) {
    lines.push('signature base rebuilt from this request:');
    for (const line of error.signatureBase.split('\n')) lines.push(`  ${line}`);
  }
  return lines.join('\n');
}

/**
 * `verify-webhook`: checks a captured webhook (headers file, body file, the URL it was sent to,
 * the platform webhook keys) and says what is wrong. A webhook that fails only because its
 * signature has expired (captured more than 5 minutes ago) is checked again at its signing
 * time, to tell whether the rest is sound. Resolves the exit code: 0 verified, 1 refused.
 */
export async function verifyCaptured(
  options: {
    url?: string | undefined;
    headers?: string | undefined;
    body?: string | undefined;
    now?: string | undefined;
    flags: ConfigFlags;
  },
  env: NodeJS.ProcessEnv,
): Promise<number> {
  if (!options.headers || !options.body) {
    throw new CliError(
      'verify-webhook needs --headers FILE and --body FILE (and --url URL unless the headers file has the request line)',
      2,
    );
  }
  let head: CapturedHead;
  let body: Buffer;
  try {
    head = parseCapturedHead(readFileSync(options.headers, 'utf8'));
    body = readFileSync(options.body);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot read the captured webhook: ${(error as Error).message}`);
  }
  const target = options.url ?? head.target;
  if (!target) throw new CliError('give --url: the webhook URL the delivery was sent to, query string included', 2);
  let nowMs = Date.now();
  if (options.now !== undefined) {
    if (!/^\d{1,12}$/.test(options.now)) throw new CliError('--now is Unix seconds', 2);
    nowMs = Number(options.now) * 1000;
  }
  const keys = webhookKeys(options.flags, env);
  const webhook: IncomingWebhook = { method: head.method ?? 'POST', target, headers: head.headers, body };

  try {
    const verified = await new WebhookVerifier({ webhookKeys: keys, clock: () => nowMs }).verify(webhook);
    process.stdout.write(
      `verified: ${describeEvent(verified.event)}; signed with keyid ${verified.keyid}\n` +
        `${JSON.stringify(verified.event, null, 2)}\n`,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    process.stdout.write(`${describeFailure(error)}\n`);
    if (error.check === 'signature-input' && /expired|future/.test(error.reason)) {
      process.stdout.write(`${await recheckAtSigningTime(webhook, keys)}\n`);
    }
    return 1;
  }
}

async function recheckAtSigningTime(webhook: IncomingWebhook, keys: ReturnType<typeof webhookKeys>): Promise<string> {
  const input = collectHeaders(webhook.headers as HeaderPair[]).get('signature-input')?.[0] ?? '';
  const params = parseSignatureInput(input, WEBHOOK_PROFILE);
  if (!params.ok) return '';
  const created = params.value.created;
  try {
    await new WebhookVerifier({ webhookKeys: keys, clock: () => created * 1000 }).verify(webhook);
    return `Checked again at its signing time (--now ${created}): everything else verifies, so the delivery is authentic and only too old.`;
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    return `Checked again at its signing time (--now ${created}), it still fails:\n${describeFailure(error)}`;
  }
}
