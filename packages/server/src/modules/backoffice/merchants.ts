/**
 * Merchants in the back office: the list (with each merchant's volume and balances) and one
 * merchant's page (its people, keys, webhook delivery health, channels used, balances, fee plan).
 */
import type { Accounts } from '../accounts/service.js';
import type { Balances } from '../balances/service.js';
import type { Fees } from '../fees/service.js';
import type { Merchants } from '../merchants/service.js';
import type { Payments } from '../payments/service.js';
import type { Payouts } from '../payouts/service.js';
import type { Role as PortalRole } from '../portal/access.js';
import type { Webhooks } from '../webhooks/service.js';

/** Merchants a list page holds. */
export const MERCHANT_PAGE_SIZE = 100;
/** The period a merchant's volume and delivery health cover: the last 30 days. */
const PERIOD_MS = 30 * 86_400_000;

/** What the merchants' pages read. */
export interface BackofficeMerchantServices {
  readonly merchants: Merchants;
  readonly payments: Payments;
  readonly payouts: Payouts;
  readonly balances: Balances;
  readonly webhooks: Webhooks;
  readonly fees: Fees;
  /** The portal's people: a merchant's page lists them. */
  readonly portal: Accounts<PortalRole>;
  readonly now: () => number;
}

type ListServices = Pick<BackofficeMerchantServices, 'merchants' | 'payments' | 'payouts' | 'balances' | 'now'>;

const balancesOf = async (services: Pick<BackofficeMerchantServices, 'balances'>, merchantId: bigint) =>
  services.balances.list(merchantId);

/**
 * Merchants in creation order, a page at a time (`cursor`: the last id of the page before), each
 * with its succeeded payments and payouts of the last 30 days by currency and its balances.
 */
export async function merchantList(services: ListServices, after: bigint | undefined) {
  const page = await services.merchants.page(after, MERCHANT_PAGE_SIZE + 1);
  const merchants = page.slice(0, MERCHANT_PAGE_SIZE);
  const ids = merchants.map((m) => m.id);
  const range = { from: services.now() - PERIOD_MS, to: services.now() };
  const [payments, payouts, balances] = await Promise.all([
    services.payments.volumes(ids, range),
    services.payouts.volumes(ids, range),
    // One statement for the page: the ledger batches the balance reads of one turn.
    Promise.all(ids.map((id) => balancesOf(services, id))),
  ]);
  const last = merchants.at(-1);
  return {
    items: merchants.map((m, index) => ({
      accessKey: m.accessKey,
      name: m.name,
      environment: m.environment,
      disabled: m.disabled,
      createdAt: m.createdAt,
      volume: { from: range.from, to: range.to, payments: payments.get(m.id) ?? [], payouts: payouts.get(m.id) ?? [] },
      balances: balances[index] ?? [],
    })),
    ...(page.length > MERCHANT_PAGE_SIZE && last ? { nextCursor: last.id.toString() } : {}),
  };
}

/** One merchant's page. */
export async function merchantPage(services: BackofficeMerchantServices, merchant: { id: bigint; accessKey: string }) {
  const profile = (await services.merchants.profiles([merchant.id])).get(merchant.id);
  const now = services.now();
  const range = { from: now - PERIOD_MS, to: now };
  const [people, keys, health, balances, paymentChannels, payoutChannels, payments, payouts, fees] = await Promise.all([
    services.portal.users(merchant.accessKey),
    services.merchants.keys(merchant.accessKey),
    services.webhooks.health(merchant.id, range.from),
    services.balances.list(merchant.id),
    services.payments.channelsUsed(merchant.id),
    services.payouts.channelsUsed(merchant.id),
    services.payments.volumes([merchant.id], range),
    services.payouts.volumes([merchant.id], range),
    services.fees.planOf(merchant.id),
  ]);
  return {
    accessKey: merchant.accessKey,
    name: profile?.name ?? '',
    environment: profile?.environment,
    disabled: profile?.disabled ?? false,
    people,
    keys,
    webhookHealth: health,
    balances,
    channels: { payments: paymentChannels, payouts: payoutChannels },
    volume: { ...range, payments: payments.get(merchant.id) ?? [], payouts: payouts.get(merchant.id) ?? [] },
    fees: fees.overrides,
  };
}
