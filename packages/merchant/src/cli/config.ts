import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { PaygateClientOptions } from '../client.js';
import { parseOnboarding, type WebhookKey } from '../config.js';
import { PaygateConfigError } from '../errors.js';

/** A command-line failure: printed to stderr; exit code 1, or 2 for a usage error. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Default platform URL: where `npm start` listens. */
export const DEFAULT_URL = 'http://127.0.0.1:8080';

const webhookKeysSchema = z.array(z.object({ keyid: z.string().min(1), publicKey: z.string().min(1) })).min(1);

/** The connection settings, as flags give them (`undefined` when not given). */
export interface ConfigFlags {
  readonly url?: string | undefined;
  readonly 'access-key'?: string | undefined;
  readonly 'private-key'?: string | undefined;
  readonly 'body-key-id'?: string | undefined;
  readonly 'body-public-key'?: string | undefined;
  readonly 'webhook-keys'?: string | undefined;
  readonly onboarding?: string | undefined;
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${what} ${file}: ${(error as Error).message}`, 1, { cause: error });
  }
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`${what} is not valid JSON`);
  }
}

function onboardingOf(flags: ConfigFlags, env: NodeJS.ProcessEnv) {
  const file = flags.onboarding ?? env.PAYGATE_ONBOARDING;
  if (!file) return undefined;
  try {
    return parseOnboarding(parseJson(readText(file, 'onboarding file'), `onboarding file ${file}`));
  } catch (error) {
    if (error instanceof PaygateConfigError) throw new CliError(`onboarding file ${file}: ${error.message}`);
    throw error;
  }
}

/**
 * The client settings: each from its flag, else its environment variable, else the onboarding
 * file. Every missing one is named in one error.
 */
export function clientSettings(flags: ConfigFlags, env: NodeJS.ProcessEnv): PaygateClientOptions {
  const onboarding = onboardingOf(flags, env);
  const baseUrl = flags.url ?? env.PAYGATE_URL ?? DEFAULT_URL;
  const accessKey = flags['access-key'] ?? env.PAYGATE_ACCESS_KEY ?? onboarding?.accessKey;
  const privateKeyFile = flags['private-key'] ?? env.PAYGATE_PRIVATE_KEY;
  const keyId = flags['body-key-id'] ?? env.PAYGATE_BODY_KEY_ID ?? onboarding?.bodyKey.keyId;
  const bodyPublicKey = flags['body-public-key'] ?? env.PAYGATE_BODY_PUBLIC_KEY ?? onboarding?.bodyKey.publicKey;
  const missing = [
    accessKey ? undefined : '--access-key (PAYGATE_ACCESS_KEY)',
    privateKeyFile ? undefined : '--private-key FILE (PAYGATE_PRIVATE_KEY)',
    keyId ? undefined : '--body-key-id (PAYGATE_BODY_KEY_ID)',
    bodyPublicKey ? undefined : '--body-public-key (PAYGATE_BODY_PUBLIC_KEY)',
  ].filter((name) => name !== undefined);
  if (missing.length > 0) {
    throw new CliError(
      `missing configuration: ${missing.join(', ')}. Give them as flags or environment variables, or point ` +
        '--onboarding (PAYGATE_ONBOARDING) at the JSON `paygate merchant create --json` printed.',
      2,
    );
  }
  return {
    baseUrl,
    accessKey: accessKey as string,
    privateKey: readText(privateKeyFile as string, 'private key file'),
    bodyKey: { keyId: keyId as string, publicKey: bodyPublicKey as string },
  };
}

/** The platform webhook keys: `--webhook-keys` / PAYGATE_WEBHOOK_KEYS (JSON or @FILE), else the onboarding file. */
export function webhookKeys(flags: ConfigFlags, env: NodeJS.ProcessEnv): WebhookKey[] {
  const given = flags['webhook-keys'] ?? env.PAYGATE_WEBHOOK_KEYS;
  if (given === undefined) {
    const onboarding = onboardingOf(flags, env);
    if (onboarding) return [...onboarding.webhookKeys];
    throw new CliError(
      'missing webhook keys: give --webhook-keys \'[{"keyid":"wk_…","publicKey":"…"}]\' (or @FILE, or ' +
        'PAYGATE_WEBHOOK_KEYS), or --onboarding with the JSON `paygate merchant create --json` printed.',
      2,
    );
  }
  const text = given.startsWith('@') ? readText(given.slice(1), 'webhook keys file') : given;
  const parsed = webhookKeysSchema.safeParse(parseJson(text, 'the webhook keys'));
  if (!parsed.success) {
    throw new CliError('the webhook keys must be a JSON list like [{"keyid":"wk_…","publicKey":"<base64>"}]', 2);
  }
  return parsed.data;
}
