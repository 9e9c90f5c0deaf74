import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { httpUrl } from '../../http/url.js';
import { currencyInfo } from '../catalog/catalog.js';

/** One channel of PAYGATE_CHANNELS: its name, kind, what it serves, and its kind's settings. */
export type ChannelSettings = z.infer<typeof channelSchema>;

const method = z.object({ currency: z.string(), code: z.string() }).strict();

const common = {
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'lowercase letters, digits and -, at most 40')
    .refine((name) => name !== 'sandbox', 'sandbox is the built-in channel'),
  methods: z.array(method).default([]),
  payouts: z.array(z.string()).default([]),
};

const pspSim = z
  .object({
    ...common,
    kind: z.literal('psp-sim'),
    /** The one URL rule (http/url.ts), kept without a trailing slash. */
    baseUrl: httpUrl({ httpsOnly: false, maxLength: 2048 }).transform((url) => url.replace(/\/$/, '')),
    secret: z.string().min(1, 'required'),
    /** Milliseconds a call to the channel may take (default 5000). */
    timeoutMs: z.number().int().min(100).max(60_000).default(5_000),
  })
  .strict();

const channelSchema = z.discriminatedUnion('kind', [pspSim]);

const fileSchema = z
  .object({ channels: z.array(channelSchema) })
  .strict()
  .superRefine((file, ctx) => {
    const names = new Set<string>();
    const served = new Map<string, string>();
    const paidOut = new Map<string, string>();
    file.channels.forEach((channel, i) => {
      if (names.has(channel.name))
        ctx.addIssue({ code: 'custom', path: ['channels', i, 'name'], message: 'given twice' });
      names.add(channel.name);
      channel.methods.forEach((m, j) => {
        const path = ['channels', i, 'methods', j];
        const currency = currencyInfo(m.currency);
        if (!currency)
          return ctx.addIssue({ code: 'custom', path, message: `${m.currency} is not a supported currency` });
        if (!currency.methods.includes(m.code)) {
          return ctx.addIssue({ code: 'custom', path, message: `${m.code} is not a payment method for ${m.currency}` });
        }
        const key = `${m.currency}/${m.code}`;
        const other = served.get(key);
        if (other) ctx.addIssue({ code: 'custom', path, message: `${key} is already served by ${other}` });
        served.set(key, channel.name);
      });
      channel.payouts.forEach((code, j) => {
        const path = ['channels', i, 'payouts', j];
        if (!currencyInfo(code))
          return ctx.addIssue({ code: 'custom', path, message: `${code} is not a supported currency` });
        const other = paidOut.get(code);
        if (other) ctx.addIssue({ code: 'custom', path, message: `${code} payouts are already served by ${other}` });
        paidOut.set(code, channel.name);
      });
    });
  });

/**
 * Reads and validates the PAYGATE_CHANNELS file. Throws an Error whose message is one line naming
 * the file and the first problem (the caller turns it into a ConfigError).
 */
export function loadChannelsFile(path: string, cwd: string): readonly ChannelSettings[] {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`PAYGATE_CHANNELS: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, {
      cause: error,
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`PAYGATE_CHANNELS: ${file} is not JSON`, { cause: error });
  }
  return parseChannels(raw, file);
}

/** Validates a parsed PAYGATE_CHANNELS document (`where` names it in the message). */
export function parseChannels(raw: unknown, where = 'PAYGATE_CHANNELS'): readonly ChannelSettings[] {
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw new Error(`PAYGATE_CHANNELS: ${where}${at}: ${issue?.message ?? 'invalid'}`);
  }
  return Object.freeze(parsed.data.channels.map((channel) => Object.freeze(channel)));
}
