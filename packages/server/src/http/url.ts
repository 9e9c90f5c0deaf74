import { z } from 'zod';

/** A URL that passed the rule, or why it did not. */
export type HttpUrlResult = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * Control characters (C0, DEL, C1) and any whitespace, anywhere in the raw input. The WHATWG
 * parser would silently strip some of them (leading and trailing C0 and spaces, tabs and line
 * breaks anywhere), so what is stored would differ from what the merchant sent.
 */
const CONTROL_OR_WHITESPACE = /[\p{Cc}\s]/u;

/**
 * The authority as written: `scheme://` and what follows up to the path, query or fragment.
 * The WHATWG parser forgives a missing or empty authority for http(s): `http:///x`, `http:/x`
 * and `http:x` all become `http://x/`, taking the host from the path. RFC 9110 §4.2.1 says a
 * recipient must reject an http(s) URI with an empty host, so the raw input is held to it
 * (a backslash ends the authority as the WHATWG parser reads it for these schemes).
 */
const WRITTEN_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/([^/\\?#]*)/i;

/** Why the authority as written in `raw` is refused, if it is. */
function writtenAuthorityFault(raw: string): string | undefined {
  const authority = WRITTEN_AUTHORITY.exec(raw)?.[1];
  if (authority === undefined) return 'must start with scheme:// and a host';
  // Even an empty userinfo (`http://@host/`), which the parser drops without a trace.
  if (authority.includes('@')) return 'must not have credentials';
  const host = authority.startsWith('[') ? authority : authority.replace(/:[^:]*$/, '');
  return host === '' ? 'has no host' : undefined;
}

/**
 * The one rule for every URL the platform accepts: parsed with the WHATWG URL parser, no
 * control characters or whitespace in the raw input, an http(s) scheme (https only when
 * `httpsOnly`), a host written after `scheme://` (not one the parser took from the path), no
 * credentials and no fragment. The URL to keep is `url.href`, the
 * normalized form; whoever calls or signs for it uses that same string.
 */
export function parseHttpUrl(raw: string, options: { httpsOnly: boolean }): HttpUrlResult {
  if (CONTROL_OR_WHITESPACE.test(raw)) return { ok: false, reason: 'has control characters or whitespace' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'is not an absolute URL' };
  }
  const schemes = options.httpsOnly ? ['https:'] : ['https:', 'http:'];
  if (!schemes.includes(url.protocol)) {
    return { ok: false, reason: options.httpsOnly ? 'must be an https URL' : 'must be an http or https URL' };
  }
  const fault = writtenAuthorityFault(raw);
  if (fault !== undefined) return { ok: false, reason: fault };
  if (url.hostname === '') return { ok: false, reason: 'has no host' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'must not have credentials' };
  // `hash` is empty for a bare `#` as well, but the normalized form keeps the `#`.
  if (url.href.includes('#')) return { ok: false, reason: 'must not have a fragment' };
  return { ok: true, url };
}

/**
 * A zod schema for a URL input under the rule above; its output is the normalized URL.
 * `refuse` may add a check of its own on the parsed URL (returning why it is refused).
 */
export function httpUrl(options: {
  httpsOnly: boolean;
  maxLength: number;
  refuse?: ((url: URL) => string | undefined) | undefined;
}) {
  // What each input came to, kept: a merchant sends the same few webhook and return URLs on every
  // request, and the check is a pure function of the input (the rule, `refuse` over the address
  // as written; names are resolved when delivering, not here). Bounded: emptied when full.
  const judged = new Map<string, { readonly href: string } | { readonly reason: string }>();
  const judge = (raw: string): { readonly href: string } | { readonly reason: string } => {
    const parsed = parseHttpUrl(raw, options);
    const reason = parsed.ok ? options.refuse?.(parsed.url) : parsed.reason;
    if (!parsed.ok || reason !== undefined) return { reason: reason ?? 'is not a URL' };
    // Normalizing may lengthen it (percent-encoding); the stored form obeys the limit too.
    if (parsed.url.href.length > options.maxLength) {
      return { reason: `at most ${options.maxLength} characters once normalized` };
    }
    return { href: parsed.url.href };
  };
  return z
    .string()
    .max(options.maxLength, `at most ${options.maxLength} characters`)
    .transform((raw, context) => {
      let verdict = judged.get(raw);
      if (verdict === undefined) {
        verdict = judge(raw);
        if (judged.size >= JUDGED_URLS) judged.clear();
        judged.set(raw, verdict);
      }
      if ('reason' in verdict) {
        context.addIssue({ code: 'custom', message: verdict.reason });
        return z.NEVER;
      }
      return verdict.href;
    });
}

/** URL inputs whose verdict one schema keeps (httpUrl). */
const JUDGED_URLS = 1024;

/**
 * `url` with `params` appended after any query parameters it already has, which are kept byte
 * for byte: how the payer is sent back to a merchant's returnUrl.
 */
export function withQuery(url: string, params: Readonly<Record<string, string>>): string {
  const target = new URL(url);
  const ours = new URLSearchParams(params).toString();
  target.search = target.search === '' ? ours : `${target.search.slice(1)}&${ours}`;
  return target.href;
}
