import type { AuditActor } from '../audit/service.js';

/**
 * Who an accounts machinery serves. The portal's people (a merchant's teammates) and the back
 * office's operators (the platform's own people) sign in through the same code (service.ts,
 * routes.ts); what differs between them is said here, once per audience, by the module that owns
 * the audience's door (modules/portal/access.ts, modules/backoffice/access.ts).
 */
export interface Audience<R extends string = string> {
  /** Stored with each account, sign-in attempt and passkey challenge. */
  readonly name: 'portal' | 'backoffice';
  /** Its roles; an account has exactly one. */
  readonly roles: readonly R[];
  /** The role that is never left without an activated holder (the last one cannot be demoted or removed). */
  readonly keeperRole: R;
  /** The role of a new account when the invitation names none (undefined: an invitation must name one). */
  readonly defaultRole: R | undefined;
  /** Accounts belong to a merchant (the portal) or to the platform (the back office). */
  readonly ofMerchant: boolean;
  /** A session ends this long after sign-in at the latest… */
  readonly sessionMaxMs: number;
  /** …or after this long without a request. */
  readonly sessionIdleMs: number;
  /**
   * `mandatory`: every account has a second factor; until one is set up, a session may only set
   * one up (the back office). `merchant-setting`: the merchant's owners decide (the portal).
   */
  readonly secondFactor: 'mandatory' | 'merchant-setting';
  /** The session cookie's name and path: `secure` when served over https (`__Host-` prefixed, Path=/). */
  readonly cookie: { readonly name: string; readonly path: string };
  /** Where the setup link of an invitation points, under the public URL (`/portal/setup`). */
  readonly setupPath: string;
  /** How the audit trail names a person of this audience. */
  readonly actor: (email: string) => AuditActor;
  /** What an authenticator app and a passkey prompt call the account's issuer. */
  readonly issuer: (merchantName: string | undefined) => string;
  /** What an invitation email says the person is invited to ("the merchant portal of Shop"). */
  readonly invitedTo: (merchantName: string | undefined) => string;
}

/** The session cookie of `audience`: `__Host-` prefixed (Secure, Path=/, no Domain) over https. */
export function cookieSpec(audience: Audience, publicUrl: string): { name: string; path: string; secure: boolean } {
  return publicUrl.startsWith('https:')
    ? { name: `__Host-${audience.cookie.name}`, path: '/', secure: true }
    : { name: audience.cookie.name, path: audience.cookie.path, secure: false };
}
