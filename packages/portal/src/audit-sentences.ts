/**
 * The audit trail in words: each action the platform records for a merchant, its name in the
 * filter's list, and the sentence an entry reads as ("ana@shop.example retired key k_…"). An
 * action the table does not know still reads as its code.
 */
import type { AuditEntry } from './types';

type Detail = Readonly<Record<string, unknown>>;
type Sentence = (object: string, detail: Detail) => string;

const text = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');
const factor = (detail: Detail) =>
  detail.kind === 'passkey' ? `the passkey${detail.name ? ` “${text(detail.name)}”` : ''}` : 'an authenticator app';
const because = (detail: Detail) => (detail.reason ? ` (${text(detail.reason)})` : '');

/** Every action recorded for a merchant: its label in the filter, and its sentence after the actor's name. */
export const AUDIT_ACTIONS: Readonly<Record<string, { readonly label: string; readonly sentence: Sentence }>> = {
  'signin.succeeded': {
    label: 'Signed in',
    sentence: (_o, d) => `signed in${d.with ? ` with ${d.with === 'passkey' ? 'a passkey' : text(d.with)}` : ''}`,
  },
  'signin.password_accepted': {
    label: 'Password accepted, second factor next',
    sentence: () => 'gave the right password; the second factor came next',
  },
  'signin.failed': { label: 'Sign-in failed', sentence: (_o, d) => `failed to sign in${because(d)}` },
  signout: { label: 'Signed out', sentence: () => 'signed out' },
  'session.ended': { label: 'Session ended', sentence: () => 'ended a session' },
  'password.set': {
    label: 'Password set from a setup link',
    sentence: () => 'set a password from a setup link',
  },
  'password.changed': { label: 'Password changed', sentence: () => 'changed their password' },
  'password.change_failed': {
    label: 'Password change failed',
    sentence: (_o, d) => `failed to change their password${because(d)}`,
  },
  'second_factor.setup_started': {
    label: 'Second factor set-up started',
    sentence: () => 'started setting up an authenticator app',
  },
  'second_factor.added': { label: 'Second factor added', sentence: (_o, d) => `added ${factor(d)} as a second factor` },
  'second_factor.removed': { label: 'Second factor removed', sentence: (_o, d) => `removed ${factor(d)}` },
  'second_factor.checked': {
    label: 'Second factor confirmed',
    sentence: (_o, d) => `confirmed it was them${d.with ? ` with ${text(d.with)}` : ''}`,
  },
  'second_factor.failed': {
    label: 'Second factor refused',
    sentence: (_o, d) => `gave a second factor that was refused${because(d)}`,
  },
  'security.changed': {
    label: 'Second factor requirement changed',
    sentence: (_o, d) =>
      d.requireSecondFactor ? 'required a second factor of everyone' : 'stopped requiring a second factor',
  },
  'person.invited': {
    label: 'Person invited',
    sentence: (o, d) => `invited ${o}${d.role ? ` as ${text(d.role)}` : ''}`,
  },
  'person.role_changed': {
    label: 'Role changed',
    sentence: (o, d) => `changed the role of ${o} from ${text(d.from)} to ${text(d.to)}`,
  },
  'person.removed': { label: 'Person removed', sentence: (o) => `removed ${o}` },
  'key.added': { label: 'Key added', sentence: (o) => `added key ${o}` },
  'key.retired': { label: 'Key retired', sentence: (o) => `retired key ${o}` },
  'order.canceled': { label: 'Order canceled', sentence: (o) => `canceled order ${o}` },
  'order.synced': { label: 'Order checked at its channel', sentence: (o) => `asked the channel about order ${o}` },
  'sandbox.order_moved': {
    label: 'Sandbox order moved',
    sentence: (o, d) => `moved sandbox order ${o} from ${text(d.from)} to ${text(d.to)}`,
  },
  'event.resent': { label: 'Webhook event resent', sentence: (o) => `resent webhook event ${o}` },
  'events.recovered': {
    label: 'Failed webhook events resent',
    sentence: (_o, d) => `resent ${d.resent === undefined ? 'the' : text(d.resent)} failed webhook events`,
  },
  'events.replayed': { label: 'Webhook events replayed', sentence: () => 'replayed webhook events' },
  'merchant.created': { label: 'Merchant created', sentence: () => 'created the merchant' },
  'merchant.disabled': { label: 'Merchant disabled', sentence: () => 'disabled the merchant' },
  'merchant.enabled': { label: 'Merchant enabled', sentence: () => 'enabled the merchant again' },
  'fee_plan.proposed': { label: 'Fee plan proposed', sentence: () => 'proposed a fee plan' },
  'fee_plan.applied': { label: 'Fee plan applied', sentence: () => 'approved and applied a fee plan' },
  'fee_plan.rejected': { label: 'Fee plan rejected', sentence: () => 'rejected a fee plan' },
  'adjustment.proposed': { label: 'Adjustment proposed', sentence: () => 'proposed a balance adjustment' },
  'adjustment.booked': { label: 'Adjustment booked', sentence: () => 'approved and booked a balance adjustment' },
  'adjustment.rejected': { label: 'Adjustment rejected', sentence: () => 'rejected a balance adjustment' },
};

/** Who did it, as the sentence starts. */
export function auditActor(entry: AuditEntry): string {
  return entry.actor.email ?? (entry.actor.kind === 'operator' ? 'A platform operator' : 'Paygate');
}

/** The entry as a sentence: "ana@shop.example retired key k_…". */
export function auditSentence(entry: AuditEntry): string {
  const known = AUDIT_ACTIONS[entry.action];
  const said = known
    ? known.sentence(entry.object ?? '', entry.detail ?? {})
    : `${entry.action}${entry.object ? ` ${entry.object}` : ''}`;
  return `${auditActor(entry)} ${said}`;
}
