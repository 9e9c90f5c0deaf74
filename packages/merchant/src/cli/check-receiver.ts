import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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
import { z } from 'zod';
import { loadSigningKey } from '../config.js';
import { PaygateConfigError } from '../errors.js';
import { CliError } from './config.js';

/** The keyid check-receiver signs with unless `--keyid` says otherwise. */
export const DEFAULT_CHECK_KEYID = 'wk_test_check_receiver';
/** Where check-receiver keeps its key pair unless `--key-file` says otherwise. */
export const DEFAULT_CHECK_KEY_FILE = 'paygate-check-receiver.pem';

/** One request to send, and whether a sound receiver accepts it. */
interface Shot {
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

interface Case {
  readonly name: string;
  readonly description: string;
  /** The requests, sent in order; the last one's answer is judged, earlier ones must be accepted. */
  readonly shots: () => Shot[];
  readonly expected: 'accept' | 'refuse';
}

/** What one case came to. */
export interface CaseResult {
  readonly name: string;
  readonly description: string;
  readonly expected: 'accept' | 'refuse';
  /** The HTTP status of each request sent (or `error: …` when no answer came). */
  readonly got: string[];
  readonly pass: boolean;
}

const argsSchema = z.object({
  url: z.url({ protocol: /^https?$/, error: 'URL is the http(s) address of your webhook receiver' }),
  keyid: z.string().regex(/^[\w.-]{1,100}$/, '--keyid is letters, digits, _ . - (at most 100)'),
});

/** Loads the key file, or creates it (mode 0600) when it does not exist. */
function loadOrCreateKey(file: string): { key: SigningKey; created: boolean } {
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
    return { key: loadSigningKey(readFileSync(file, 'utf8')), created: true };
  }
  try {
    return { key: loadSigningKey(readFileSync(file, 'utf8')), created: false };
  } catch (error) {
    if (error instanceof PaygateConfigError) throw new CliError(`--key-file ${file}: ${error.message}`, 2);
    throw new CliError(`cannot read --key-file ${file}: ${(error as Error).message}`, 1, { cause: error });
  }
}

/** The public key as the receiver's verifier takes it: base64 of the raw 32 bytes. */
function publicKeyOf(key: SigningKey): string {
  return Buffer.from(key.publicKey).toString('base64');
}

/** A realistic PAYMENT SUCCEEDED event body, with a fresh eventId (each case its own, so dedup by eventId never interferes). */
function eventBody(): { eventId: string; body: Buffer } {
  const eventId = `evt_check${randomUUID().replace(/-/g, '')}`;
  const event = {
    eventId,
    orderNo: `P${String(Date.now()).padStart(18, '0').slice(-18)}`,
    merchantOrderNo: `check-receiver-${randomUUID().slice(0, 8)}`,
    orderType: 'PAYMENT',
    status: 'SUCCEEDED',
    currency: 'BRL',
    amount: '10.00',
    paidAmount: '10.00',
  };
  return { eventId, body: Buffer.from(JSON.stringify(event)) };
}

/**
 * The cases: each builds its requests with the protocol package's `signWebhook` (the code the
 * platform signs with), then alters what the case is about. The one exception is "lifetime over
 * 300 s", which `signWebhook` refuses to produce: it is signed with the same protocol
 * primitives (signature base, Signature-Input serialization, Ed25519) and a longer `expires`.
 */
function cases(url: string, keyid: string, key: SigningKey): Case[] {
  const now = () => Math.floor(Date.now() / 1000);
  const signed = (
    options: { keyid?: string; key?: SigningKey; created?: number; headerEventId?: string } = {},
  ): Shot & { eventId: string } => {
    const { eventId, body } = eventBody();
    const { headers } = signWebhook(
      { url, body, eventId: options.headerEventId ?? eventId },
      {
        keyid: options.keyid ?? keyid,
        key: options.key ?? key,
        created: options.created ?? now(),
        nonce: randomUUID(),
      },
    );
    return { headers, body, eventId };
  };
  const without = (shot: Shot, ...names: string[]): Shot => ({
    body: shot.body,
    headers: Object.fromEntries(Object.entries(shot.headers).filter(([name]) => !names.includes(name))),
  });
  return [
    { name: 'valid', description: 'correctly signed', expected: 'accept', shots: () => [signed()] },
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
      name: 'wrong-key',
      description: `keyid ${keyid} but signed with another private key`,
      expected: 'refuse',
      shots: () => [signed({ key: generateSigningKey() })],
    },
    {
      name: 'unknown-keyid',
      description: 'a keyid no configured key has',
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
        const { eventId, body } = eventBody();
        const params = {
          label: WEBHOOK_LABEL,
          components: WEBHOOK_COMPONENTS,
          created: now(),
          expires: now() + 900,
          nonce: randomUUID(),
          keyid,
        };
        const headers: Record<string, string> = {
          'content-type': JSON_CONTENT_TYPE,
          'content-digest': contentDigest(body),
          'webhook-event-id': eventId,
        };
        const base = buildSignatureBase({ method: 'POST', ...webhookTarget(url), headers }, params);
        if (!base.ok) throw new Error(`cannot sign: missing ${base.error.component}`);
        headers['signature-input'] = serializeSignatureInput(params);
        headers.signature = serializeSignature(WEBHOOK_LABEL, sign(base.value, key));
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
      shots: () => [signed({ headerEventId: `evt_other${randomUUID().replace(/-/g, '')}` })],
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

async function send(url: string, shot: Shot): Promise<string> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: shot.headers,
      body: new Uint8Array(shot.body),
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    return String(response.status);
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause;
    return `error: ${cause?.message ?? (error as Error).message}`;
  }
}

const accepted = (got: string) => /^2\d\d$/.test(got);

/** Fires every case at the receiver, in turn. */
export async function runChecks(url: string, keyid: string, key: SigningKey): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const one of cases(url, keyid, key)) {
    const got: string[] = [];
    for (const shot of one.shots()) got.push(await send(url, shot));
    const last = got.at(-1) as string;
    const earlierAccepted = got.slice(0, -1).every(accepted);
    const pass =
      earlierAccepted && (one.expected === 'accept' ? accepted(last) : /^\d+$/.test(last) && !accepted(last));
    results.push({ name: one.name, description: one.description, expected: one.expected, got, pass });
  }
  return results;
}

function table(results: readonly CaseResult[]): string {
  const rows = results.map((r) => [
    r.name,
    r.expected === 'accept' ? 'accept (2xx)' : 'refuse (non-2xx)',
    r.got.join(' then '),
    r.pass ? 'PASS' : 'FAIL',
  ]);
  const all = [['case', 'expected', 'got', 'result'], ...rows];
  const widths = [0, 1, 2].map((i) => Math.max(...all.map((row) => (row[i] as string).length)));
  return all
    .map((row) => row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i] as number) : cell)).join('  '))
    .join('\n');
}

/**
 * `check-receiver URL [--key-file FILE] [--keyid ID] [--json]`: fires correctly signed and
 * tampered webhooks at the merchant's own receiver and reports, case by case, whether it
 * accepted the good ones and refused the bad. The receiver must trust the test key (its public
 * key and keyid are printed): a missing key file is created and the command stops there, so
 * that the receiver can be configured first. Resolves the exit code: 0 all pass, 1 otherwise,
 * 3 when the key was just created.
 */
export async function checkReceiver(
  positionals: readonly string[],
  options: { keyFile?: string | undefined; keyid?: string | undefined; json: boolean },
): Promise<number> {
  const parsed = argsSchema.safeParse({ url: positionals[0], keyid: options.keyid ?? DEFAULT_CHECK_KEYID });
  if (!parsed.success || positionals.length !== 1) {
    const problems = parsed.success ? ['give exactly one URL'] : parsed.error.issues.map((i) => i.message);
    throw new CliError(`check-receiver URL [--key-file FILE] [--keyid ID]: ${problems.join('; ')}`, 2);
  }
  const { url, keyid } = parsed.data;
  const keyFile = options.keyFile ?? DEFAULT_CHECK_KEY_FILE;
  const { key, created } = loadOrCreateKey(keyFile);
  const publicKey = publicKeyOf(key);
  const trust = `{"keyid":"${keyid}","publicKey":"${publicKey}"}`;
  process.stderr.write(
    `check-receiver signs with keyid ${keyid}, public key ${publicKey} (private key in ${keyFile}).\n` +
      `Configure your receiver's verifier with this extra key while testing, e.g. webhookKeys: [...onboarding.webhookKeys, ${trust}],\n` +
      'and with a replay guard (consumeNonce). Remove the key afterwards.\n',
  );
  if (created) {
    process.stderr.write(`Created ${keyFile}: configure the receiver with the key above, then run this again.\n`);
    if (options.json) process.stdout.write(`${JSON.stringify({ url, keyid, publicKey, keyFile, created: true })}\n`);
    return 3;
  }
  const results = await runChecks(url, keyid, key);
  const passed = results.every((r) => r.pass);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ url, keyid, publicKey, passed, cases: results })}\n`);
  } else {
    const failed = results.filter((r) => !r.pass).length;
    process.stdout.write(`${table(results)}\n`);
    process.stdout.write(passed ? `all ${results.length} cases pass\n` : `${failed} of ${results.length} cases FAIL\n`);
    if (results[0]?.name === 'valid' && !results[0].pass) {
      process.stdout.write('The valid webhook was refused: is the receiver configured with the key above?\n');
    }
  }
  return passed ? 0 : 1;
}
