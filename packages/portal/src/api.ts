/**
 * The app's API client (the portal's, or the back office's in its build: ./site.ts): same-origin
 * fetch with the session cookie, the CSRF token on writes.
 */
import { SITE } from './site';

export const API_BASE = SITE.apiBase;

/** A refusal from the API: `msg` code, message and any field errors. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fieldErrors: readonly { field: string; message: string }[] = [],
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let csrfToken: string | undefined;

/** Remembers the session's CSRF token (from sign-in or GET /session); cleared on sign-out. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** Fired when the server says the session is gone, so the app can show the sign-in page. */
export const SIGNED_OUT_EVENT = SITE.signedOutEvent;

/**
 * Asks the person for their second factor again (the app's step-up dialog); resolves true once a
 * code checked out, false when they gave up.
 */
let stepUp: (() => Promise<boolean>) | undefined;

/** The app registers its step-up dialog here. */
export function setStepUpHandler(handler: (() => Promise<boolean>) | undefined): void {
  stepUp = handler;
}

export async function request<T>(method: 'GET' | 'POST', path: string, body?: unknown, retried = false): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    if (csrfToken) headers['x-csrf-token'] = csrfToken;
  }
  let response: Response;
  try {
    response = await fetch(API_BASE + path, {
      method,
      headers,
      credentials: 'same-origin',
      ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The server could not be reached. Check your connection and try again.');
  }
  let payload: { msg?: string; message?: string; data?: T; errors?: { field: string; message: string }[] } = {};
  try {
    payload = (await response.json()) as typeof payload;
  } catch {
    // A non-JSON answer (a proxy's error page): reported by status below.
  }
  if (response.ok && payload.msg === 'SUCCESS') return payload.data as T;
  const code = payload.msg ?? `HTTP_${response.status}`;
  // A sensitive change after 5 minutes without a check: ask for the code, then send it once more.
  if (code === 'STEP_UP_REQUIRED' && stepUp && !retried && (await stepUp())) {
    return request<T>(method, path, body, true);
  }
  if (response.status === 401 && code === 'UNAUTHORIZED') {
    setCsrfToken(undefined);
    window.dispatchEvent(new Event(SIGNED_OUT_EVENT));
  }
  const retryAfter = Number(response.headers.get('retry-after'));
  throw new ApiError(
    response.status,
    code,
    payload.message ?? `The request failed (HTTP ${response.status}).`,
    payload.errors ?? [],
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body),
};

/** `?a=1&b=2` from the defined, non-empty values. */
export function queryString(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** The address of a download (a CSV, a bank file's XML): a plain link, sent with the session cookie. */
export const downloadUrl = (path: string) => API_BASE + path;
