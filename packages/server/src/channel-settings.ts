import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { isBic, normalizeIban } from '@paygate/iso20022';
import ssh2 from 'ssh2';
import { z } from 'zod';
import { currencyInfo } from './catalog.js';
import { parseDuration } from './duration.js';
import { httpUrl, parseHttpUrl } from './http/url.js';

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

/** The one URL rule (http/url.ts), https only, kept without a trailing slash. */
const httpsUrl = z.string().transform((raw, context) => {
  const parsed = parseHttpUrl(raw, { httpsOnly: true });
  if (!parsed.ok) {
    context.addIssue({ code: 'custom', message: 'an https URL' });
    return z.NEVER;
  }
  return parsed.url.href.replace(/\/$/, '');
});

/** Reads a PEM file named in the settings; a problem becomes an issue of that member. */
function readPem(path: string, ctx: z.RefinementCtx): string | undefined {
  try {
    return readFileSync(resolve(path), 'utf8');
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: `cannot read ${resolve(path)} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    });
    return undefined;
  }
}

/** A PEM file holding a certificate (the first one of a bundle is checked). */
const certificateFile = (what: string) =>
  z
    .string()
    .min(1, 'required')
    .superRefine((path, ctx) => {
      const pem = readPem(path, ctx);
      if (pem === undefined) return;
      try {
        new X509Certificate(pem);
      } catch {
        ctx.addIssue({ code: 'custom', message: what });
      }
    });

/** A PEM file holding an unencrypted private key. */
const privateKeyFile = z
  .string()
  .min(1, 'required')
  .superRefine((path, ctx) => {
    const pem = readPem(path, ctx);
    if (pem === undefined) return;
    try {
      createPrivateKey(pem);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not a PEM private key (unencrypted)' });
    }
  });

/**
 * Kind `pix-api` (decisions.md, "The Pix API: a real rail"): any provider of Brazil's API Pix,
 * over mTLS with an OAuth 2.0 client-credentials token. It receives money only. Its files are
 * read here, at start-up, so a missing file, a key that is not the certificate's or a CA file
 * with no certificate stops the start with one line each (paths relative to the working
 * directory).
 */
const pixApi = z
  .object({
    ...common,
    kind: z.literal('pix-api'),
    methods: z
      .array(method)
      .default([{ currency: 'BRL', code: 'PIX' }])
      .refine(
        (methods) => methods.every((m) => m.currency === 'BRL' && m.code === 'PIX'),
        'the API Pix serves BRL/PIX only',
      ),
    payouts: z.array(z.string()).max(0, 'the API Pix receives money only: payouts must be []').default([]),
    baseUrl: httpsUrl,
    tokenUrl: httpsUrl,
    clientId: z.string().min(1, 'required'),
    clientSecret: z.string().min(1, 'required'),
    /** The receiving account's Pix key (DICT key, at most 77 characters). */
    pixKey: z.string().min(1, 'required').max(77, 'at most 77 characters'),
    certFile: certificateFile('not a PEM certificate'),
    keyFile: privateKeyFile,
    caFile: certificateFile('no PEM certificate in it').optional(),
    /** Milliseconds a call to the provider may take (default 5000). */
    timeoutMs: z.number().int().min(100).max(60_000).default(5_000),
  })
  .strict()
  .superRefine((settings, ctx) => {
    // A pair? Only asked when both files are readable and parsed (their own checks say otherwise).
    let pair: boolean;
    try {
      const cert = new X509Certificate(readFileSync(resolve(settings.certFile), 'utf8'));
      pair = cert.checkPrivateKey(createPrivateKey(readFileSync(resolve(settings.keyFile), 'utf8')));
    } catch {
      return;
    }
    if (!pair) {
      ctx.addIssue({
        code: 'custom',
        path: ['keyFile'],
        message: 'not the private key of the certificate in certFile',
      });
    }
  });

/** An OpenSSH (or PEM) private key file ssh2 can use, unencrypted: the platform's SFTP identity. */
const sshPrivateKeyFile = z
  .string()
  .min(1, 'required')
  .superRefine((path, ctx) => {
    const text = readPem(path, ctx);
    if (text === undefined) return;
    const parsed = ssh2.utils.parseKey(text);
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (key instanceof Error || key === undefined || !key.isPrivateKey()) {
      ctx.addIssue({
        code: 'custom',
        message: `not an unencrypted OpenSSH or PEM private key (${key instanceof Error ? key.message : 'no private key'})`,
      });
    }
  });

/** A directory on the bank's server: an absolute path, kept without a trailing slash. */
const remoteDir = z
  .string()
  .regex(/^\/[^\0]*$/, 'an absolute path on the server, such as /upload')
  .transform((dir) => (dir.length > 1 ? dir.replace(/\/+$/, '') : dir));

/** A duration such as 60s or 5m (at least one second). */
const every = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1_000) {
    ctx.addIssue({ code: 'custom', message: 'a duration of at least 1s, such as 60s or 5m' });
    return z.NEVER;
  }
  return ms;
});

/** Whether `zone` is an IANA time zone this Node.js knows (its Intl data). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The time zone of a sepa-sftp channel that names none: the euro area's (CET/CEST), where TARGET runs. */
export const SEPA_TIME_ZONE = 'Europe/Brussels';

/** A sepa-sftp channel's cut-off time (`cutOffs`, `cutOff`): `HH:MM` from 00:00 to 23:59. */
export const CUT_OFF = /^(?:[01]\d|2[0-3]):[0-5]\d$/;

/**
 * Kind `sepa-sftp` (decisions.md, "SEPA payouts: ISO 20022 files with a bank"): EUR payouts as
 * SEPA Credit Transfers (or SEPA Instant ones) in pain.001 files uploaded to the bank over SFTP,
 * its pain.002, camt.054 and camt.053 read back; EUR payments by bank transfer to the same account. The key file is read and parsed here, at start-up; the IBAN and BIC are
 * checked with @paygate/iso20022 (ibantools).
 */
const sepaSftp = z
  .object({
    ...common,
    kind: z.literal('sepa-sftp'),
    // Payments by bank transfer (decisions.md, "Payments by bank transfer"): EUR/SEPA only.
    methods: z
      .array(method)
      .refine(
        (methods) =>
          methods.length === 0 ||
          (methods.length === 1 && methods[0]?.currency === 'EUR' && methods[0].code === 'SEPA'),
        'a sepa-sftp channel takes payments by bank transfer in EUR only: methods must be [] or [{"currency": "EUR", "code": "SEPA"}]',
      )
      .default([]),
    payouts: z
      .array(z.string())
      .refine((p) => p.length === 1 && p[0] === 'EUR', 'a sepa-sftp channel pays out EUR: payouts must be ["EUR"]'),
    host: z.string().min(1, 'required'),
    port: z.number().int().min(1).max(65_535).default(22),
    username: z.string().min(1, 'required'),
    privateKeyFile: sshPrivateKeyFile,
    hostKey: z
      .string()
      .regex(
        /^SHA256:[A-Za-z0-9+/]{43}$/,
        'the server host key fingerprint as ssh-keygen -lf prints it: SHA256: and 43 base64 characters',
      ),
    uploadDir: remoteDir,
    downloadDir: remoteDir,
    debtor: z
      .object({
        name: z.string().min(1, 'required').max(70, 'at most 70 characters'),
        iban: z.string().transform((raw, ctx) => {
          const iban = normalizeIban(raw);
          if (iban === undefined) {
            ctx.addIssue({ code: 'custom', message: 'not an IBAN (country length and mod-97 check)' });
            return z.NEVER;
          }
          return iban;
        }),
        bic: z
          .string()
          .refine((bic) => isBic(bic), 'not a BIC (8 or 11 characters, upper case)')
          .optional(),
      })
      .strict(),
    batchEvery: every.default(60_000),
    pollEvery: every.default(60_000),
    /** The bank's time zone: the files' execution date is its calendar day (see execution-date.ts). */
    timeZone: z.string().refine(isTimeZone, 'an IANA time zone such as Europe/Brussels').default(SEPA_TIME_ZONE),
    /**
     * The bank's cut-off times in `timeZone` (`HH:MM`), on its business days: each closes the open
     * batch (besides `batchEvery`), and a file built after the day's last one asks for the next
     * business day. Kept sorted, each once.
     */
    cutOffs: z
      .array(z.string().regex(CUT_OFF, 'a time of day as HH:MM, 24-hour, such as 15:00'))
      .max(48, 'at most 48 cut-off times')
      .transform((times) => [...new Set(times)].sort())
      .optional(),
    /** One cut-off time: the same as `cutOffs: [cutOff]` (the member before `cutOffs`; give one of the two). */
    cutOff: z.string().regex(CUT_OFF, 'a time of day as HH:MM, 24-hour, such as 15:00').optional(),
    /**
     * SEPA Instant Credit Transfers (`LclInstrm/Cd` `INST`): every confirmed payout leaves in a file
     * of its own, with those confirmed in the same second, within 2 s, whatever `batchEvery` says.
     */
    instant: z.boolean().default(false),
    /** Milliseconds the connection and each SFTP operation may take (default 10000). */
    timeoutMs: z.number().int().min(100).max(120_000).default(10_000),
  })
  .strict()
  .superRefine((settings, ctx) => {
    if (settings.cutOff !== undefined && settings.cutOffs !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['cutOff'], message: 'give cutOffs or cutOff, not both' });
    }
  })
  // `cutOff` is read as `cutOffs` with one time; only `cutOffs` goes on from here.
  .transform(({ cutOff, cutOffs, ...settings }) => ({
    ...settings,
    cutOffs: cutOffs ?? (cutOff === undefined ? [] : [cutOff]),
  }));

const channelSchema = z.discriminatedUnion('kind', [pspSim, pixApi, sepaSftp]);

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

/**
 * Validates a parsed PAYGATE_CHANNELS document (`where` names it in the message): one line per
 * mistake.
 */
export function parseChannels(raw: unknown, where = 'PAYGATE_CHANNELS'): readonly ChannelSettings[] {
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const at = issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
      return `PAYGATE_CHANNELS: ${where}${at}: ${issue.message}`;
    });
    throw new Error([...new Set(lines)].join('\n') || `PAYGATE_CHANNELS: ${where}: invalid`);
  }
  return Object.freeze(parsed.data.channels.map((channel) => Object.freeze(channel)));
}
