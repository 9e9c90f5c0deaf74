/**
 * Portal test helpers: portal users invited through the operator API and set up through their
 * link, and a small cookie-keeping client of the portal API (what the web app does in a browser).
 */
import { randomUUID } from 'node:crypto';
import type { Platform } from '../src/platform.js';
import type { TestMerchant } from './harness.js';

/** The operator token `startTestPlatform` configures. */
export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const PASSWORD = 'correct horse battery staple';

export interface PortalResponse<T = unknown> {
  readonly status: number;
  readonly body: { msg: string; data?: T; message?: string; errors?: { field: string; message: string }[] };
  readonly headers: Headers;
  readonly text: string;
}

async function toResponse<T>(response: Response): Promise<PortalResponse<T>> {
  const text = await response.text();
  let body: PortalResponse<T>['body'];
  try {
    body = JSON.parse(text) as PortalResponse<T>['body'];
  } catch {
    body = { msg: '(not JSON)' };
  }
  return { status: response.status, body, headers: response.headers, text };
}

/** `paygate user invite` over the operator API: the setup link and its token. */
export async function invite(platform: Platform, accessKey: string, email: string, role?: string) {
  const response = await fetch(`${platform.url}/admin/v1/merchants/${accessKey}/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(role === undefined ? { email } : { email, role }),
  });
  const result = await toResponse<{
    setupUrl: string;
    email: string;
    role: string;
    expiresAt: number;
    existingUser: boolean;
  }>(response);
  if (result.status !== 200 || !result.body.data) throw new Error(`invite failed: ${result.text}`);
  const token = new URL(result.body.data.setupUrl).hash.replace(/^#token=/, '');
  return { ...result.body.data, token };
}

/** Sets a password through a setup link. */
export async function setup(platform: Platform, token: string, password: string) {
  return toResponse<{ email: string }>(
    await fetch(`${platform.url}/portal/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, password }),
    }),
  );
}

/** An activated portal user of `merchant` (an owner unless `role` says otherwise). */
export async function portalUser(platform: Platform, merchant: TestMerchant, password = PASSWORD, role?: string) {
  const email = `user-${randomUUID().slice(0, 8)}@shop.example`;
  const { token } = await invite(platform, merchant.accessKey, email, role);
  const done = await setup(platform, token, password);
  if (done.status !== 200) throw new Error(`setup failed: ${done.text}`);
  return { email, password };
}

export interface RequestOptions {
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Leave out the CSRF header (to test its refusal). */
  readonly noCsrf?: boolean;
}

/** A browser-like client: keeps the session cookie and sends the CSRF token on writes. */
export class PortalClient {
  cookie: string | undefined;
  csrfToken: string | undefined;
  setCookie: string | undefined;

  constructor(readonly platform: Platform) {}

  static async signIn(platform: Platform, email: string, password: string): Promise<PortalClient> {
    const client = new PortalClient(platform);
    const response = await client.signIn(email, password);
    if (response.status !== 200) throw new Error(`sign-in failed: ${response.text}`);
    return client;
  }

  async signIn(email: string, password: string, headers: Record<string, string> = {}) {
    const response = await this.request<{ csrfToken: string }>('POST', '/portal/api/session', {
      body: { email, password },
      headers,
    });
    if (response.status === 200) this.csrfToken = response.body.data?.csrfToken;
    return response;
  }

  async request<T = unknown>(method: 'GET' | 'POST', path: string, options: RequestOptions = {}) {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookie) headers.cookie = this.cookie;
    if (method === 'POST') {
      headers['content-type'] = 'application/json';
      if (this.csrfToken && !options.noCsrf) headers['x-csrf-token'] = this.csrfToken;
    }
    const response = await fetch(this.platform.url + path, {
      method,
      headers,
      redirect: 'manual',
      ...(method === 'POST' ? { body: JSON.stringify(options.body ?? {}) } : {}),
    });
    const setCookie = response.headers.get('set-cookie');
    if (setCookie) {
      this.setCookie = setCookie;
      const pair = setCookie.split(';')[0] as string;
      this.cookie = /Max-Age=0/i.test(setCookie) ? undefined : pair;
    }
    return toResponse<T>(response);
  }

  get<T = unknown>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }

  post<T = unknown>(path: string, body?: unknown, options: Omit<RequestOptions, 'body'> = {}) {
    return this.request<T>('POST', path, { ...options, body });
  }
}
