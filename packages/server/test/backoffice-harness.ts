/**
 * Back-office test helpers: operators invited through the operator API (what `paygate operator
 * invite` calls), set up through their link (which signs them in) with an authenticator app, and
 * the cookie-keeping client of the portal's tests pointed at /backoffice/api.
 */
import { randomUUID } from 'node:crypto';
import { totpCode } from '../src/modules/accounts/second-factor.js';
import type { OperatorRole } from '../src/modules/backoffice/access.js';
import { ADMIN_TOKEN, PASSWORD, PortalClient, type PortalResponse } from './portal-harness.js';
import type { TestPlatform } from './harness.js';

export const BACKOFFICE = '/backoffice/api';

/** `paygate operator invite` over the operator API: the setup link and its token. */
export async function inviteOperator(platform: TestPlatform, email: string, role?: OperatorRole) {
  const response = await fetch(`${platform.url}/admin/v1/operators`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(role === undefined ? { email } : { email, role }),
  });
  const body = (await response.json()) as {
    msg: string;
    data?: { setupUrl: string; email: string; role: string; expiresAt: number; existingOperator: boolean };
  };
  if (response.status !== 200 || !body.data) throw new Error(`operator invite failed: ${JSON.stringify(body)}`);
  const token = new URL(body.data.setupUrl).hash.replace(/^#token=/, '');
  return { ...body.data, token };
}

/** A client of the back-office API: the portal tests' client, its session cookie the back office's. */
export class OperatorClient extends PortalClient {
  email = '';
  /** The operator's TOTP secret (base32), once set up. */
  totpSecret: string | undefined;

  /** Sets the password through a setup link: the answer signs the client in (cookie and CSRF token). */
  async setup(token: string, password = PASSWORD) {
    const response = await this.post<{ csrfToken: string; email: string }>(`${BACKOFFICE}/setup`, { token, password });
    if (response.status === 200) {
      this.csrfToken = response.body.data?.csrfToken;
      this.email = response.body.data?.email ?? '';
    }
    return response;
  }

  override async signIn(email: string, password: string, headers: Record<string, string> = {}) {
    const response = await this.request<{ csrfToken: string }>('POST', `${BACKOFFICE}/session`, {
      body: { email, password },
      headers,
    });
    if (response.status === 200) this.csrfToken = response.body.data?.csrfToken;
    return response;
  }

  /** The current TOTP code of the operator's secret at the platform's time. */
  code(platform: TestPlatform): string {
    if (!this.totpSecret) throw new Error('no authenticator app set up');
    return totpCode(this.totpSecret, platform.services.now());
  }

  /** Sets up an authenticator app: the session then works. */
  async setUpTotp(platform: TestPlatform): Promise<string[]> {
    const started = await this.post<{ secret: string; uri: string }>(`${BACKOFFICE}/second-factor/totp`, {});
    if (started.status !== 200 || !started.body.data) throw new Error(`totp start failed: ${started.text}`);
    this.totpSecret = started.body.data.secret;
    const confirmed = await this.post<{ recoveryCodes: string[] }>(`${BACKOFFICE}/second-factor/totp/confirm`, {
      code: this.code(platform),
    });
    if (confirmed.status !== 200 || !confirmed.body.data) throw new Error(`totp confirm failed: ${confirmed.text}`);
    return confirmed.body.data.recoveryCodes;
  }

  bo<T = unknown>(path: string): Promise<PortalResponse<T>> {
    return this.get<T>(`${BACKOFFICE}${path}`);
  }

  boPost<T = unknown>(path: string, body: unknown = {}): Promise<PortalResponse<T>> {
    return this.post<T>(`${BACKOFFICE}${path}`, body);
  }
}

/** An operator of `role`, invited, set up and signed in with a working session (TOTP set up). */
export async function operator(platform: TestPlatform, role: OperatorRole, email?: string): Promise<OperatorClient> {
  const address = email ?? `${role}-${randomUUID().slice(0, 8)}@ops.example`;
  const { token } = await inviteOperator(platform, address, role);
  const client = new OperatorClient(platform);
  const done = await client.setup(token);
  if (done.status !== 200) throw new Error(`operator setup failed: ${done.text}`);
  await client.setUpTotp(platform);
  return client;
}
