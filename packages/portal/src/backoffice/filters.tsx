/**
 * The back office's own filter fields, for lists across every merchant; the portal's shared ones
 * (status, currency, dates, page size, the buttons) are in lists.tsx.
 */
import { Field } from '../components';

/** Payments, payouts or both (`type`). */
export function OrderTypeFilter({ value }: { value: string }) {
  return (
    <Field label="Type">
      {(props) => (
        <select {...props} name="type" defaultValue={value}>
          <option value="">All types</option>
          <option value="PAYMENT">Payments</option>
          <option value="PAYOUT">Payouts</option>
        </select>
      )}
    </Field>
  );
}

/** One merchant's rows (`merchant`), by its access key. */
export function MerchantFilter({ value }: { value: string }) {
  return (
    <Field label="Merchant" hint="Its access key.">
      {(props) => <input {...props} name="merchant" maxLength={100} defaultValue={value} />}
    </Field>
  );
}
