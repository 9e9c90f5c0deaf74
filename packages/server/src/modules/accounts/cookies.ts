/** Minimal cookie handling for the portal (RFC 6265): one session cookie, nothing else. */

/** The value of cookie `name` in a `Cookie` header, if present exactly once. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  let found: string | undefined;
  for (const pair of header.split(';')) {
    const mark = pair.indexOf('=');
    if (mark < 0 || pair.slice(0, mark).trim() !== name) continue;
    // Two cookies of the same name (e.g. one planted for a parent path): trust neither.
    if (found !== undefined) return undefined;
    found = pair.slice(mark + 1).trim();
  }
  return found;
}

export interface CookieOptions {
  readonly path: string;
  readonly secure: boolean;
  /** Seconds; 0 deletes the cookie. Omitted: a browser-session cookie. */
  readonly maxAge?: number;
}

/** A `Set-Cookie` value: always HttpOnly and SameSite=Strict; Secure when served over https. */
export function sessionCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${value}`, `Path=${options.path}`, 'HttpOnly', 'SameSite=Strict'];
  if (options.maxAge !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(options.maxAge))}`);
  if (options.maxAge === 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}
